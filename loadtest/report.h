// The results of a load run: merged per-thread statistics, the client's own CPU use and its
// verdict on whether the client (not the server) limited the figure; printed as a table for
// people and written as JSON for scripts (loadtest/bench.sh, scaling.sh).
#ifndef ONEPASS_LOADTEST_REPORT_H_
#define ONEPASS_LOADTEST_REPORT_H_

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "loadtest/load_config.h"
#include "loadtest/thread_stats.h"

namespace onepass::load {

struct RunResult {
  ThreadStats total;                 // merged
  std::vector<ThreadStats> threads;  // per thread, for CPU use
  double wall_s = 0;                 // from the common start to the last thread's end
  double process_cpu_s = 0;          // getrusage(RUSAGE_SELF) user + system during the run
  double requested_rate = 0;         // open loop [1/s]; 0 for closed loop
  int concurrency = 0;               // closed loop
  // The /proc accounting of cpu_accounting.h over the run [s]: the client's tasks and the
  // ksoftirqd of its --cpus; the server's (--server-pid) and the ksoftirqd of --server-cpus.
  double client_sched_cpu_s = 0;
  double client_softirq_cpu_s = 0;
  bool server_measured = false;
  double server_cpu_s = 0;
  double server_softirq_cpu_s = 0;
  bool tls = false;  // --proto dot: the report has the handshakes (total.tls)
  bool client_bound = false;
  std::vector<std::string> client_notes;  // why the client was (or may have been) the limit

  double achieved_rate() const;  // completed connections per second of wall time
  double success_ratio() const;  // ok / completed (1 when nothing completed... and nothing began)
  double max_thread_cpu_ratio() const;
  // CPU per ok connection [us] (0 when none was ok): the client's and the server's.
  double client_us_per_conn() const;
  double server_us_per_conn() const;
  double queries_per_s() const;  // answers judged right per second of wall time
};

// A thread whose CPU time exceeds this share of the wall time is saturated.
inline constexpr double kSaturatedCpuRatio = 0.9;

// Fills client_bound and client_notes from the statistics.
void JudgeClientLimits(RunResult* result);

// Human summary, several lines.
void PrintRunTable(const LoadConfig& config, const RunResult& result, FILE* out);

struct RampStep {
  double rate = 0;
  RunResult result;
  bool pass = false;
  std::string why_not;  // for a failed step
};

void PrintRampTable(const std::vector<RampStep>& steps, double capacity, FILE* out);

// JSON documents: the settings, then the run (or every ramp step and the capacity).
std::string RunJson(const LoadConfig& config, const std::string& settings_json,
                    const RunResult& result);
std::string RampJson(const LoadConfig& config, const std::string& settings_json,
                     const std::vector<RampStep>& steps, double capacity, double min_success,
                     double max_p99_ms);

std::string JsonEscape(absl::string_view text);

// What --proto named: the protocol's name, "dot" for DNS over TLS.
std::string ProtocolName(const LoadConfig& config);

absl::Status WriteFile(const std::string& path, const std::string& contents);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_REPORT_H_
