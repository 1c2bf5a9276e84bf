// How long each phase of a data load took (read, parse, index, precompile for DNS), so that a
// slow start or reload says where its time went (the reload log line, `--check`).
//
// Load-time code only: it reads the clock, which the data path never does.
#ifndef ONEPASS_HANDLERS_LOAD_PHASES_H_
#define ONEPASS_HANDLERS_LOAD_PHASES_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace onepass {

struct LoadPhase {
  std::string name;     // "read", "parse", ...
  absl::Duration wall;  // elapsed time
  absl::Duration cpu;   // CPU time of the loading thread
  absl::Duration runq;  // time it was runnable but waited for a CPU (/proc schedstat)
  // wall - cpu - runq: blocked (disk, a lock such as the address-space lock of mmap/mprotect).
};

// Splits one thread's load into named phases. Each Mark(name) charges the time since the
// previous mark (or construction) to `name`; a name marked again (one per zone file) adds up.
// Not thread-safe: one loading thread.
class LoadPhaseTimer {
 public:
  LoadPhaseTimer();

  void Mark(absl::string_view name);
  // In the order each name was first marked.
  const std::vector<LoadPhase>& phases() const { return phases_; }

 private:
  absl::Time last_wall_;
  absl::Duration last_cpu_;
  absl::Duration last_runq_;
  std::vector<LoadPhase> phases_;
};

// CPU time the calling thread has used so far.
absl::Duration ThreadCpuTime();
// How long the calling thread has waited on a run queue so far (zero where schedstats are off).
absl::Duration ThreadRunQueueTime();

// "read 12ms, parse 640ms (cpu 400ms, runq 200ms), ...": cpu and runq are shown where cpu is
// under 90% of wall, the sign that the loading thread waited (runq: for a CPU; the rest:
// blocked).
std::string FormatLoadPhases(const std::vector<LoadPhase>& phases);

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_LOAD_PHASES_H_
