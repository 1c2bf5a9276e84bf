#include "handlers/load_phases.h"

#include <time.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"

namespace onepass {
namespace {

// "640ms", "1.23s": a reader compares phases at a glance.
std::string Short(absl::Duration d) {
  if (d < absl::Seconds(1)) return absl::StrCat(absl::ToInt64Milliseconds(d), "ms");
  return absl::StrFormat("%.2fs", absl::ToDoubleSeconds(d));
}

}  // namespace

absl::Duration ThreadCpuTime() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return absl::DurationFromTimespec(now);
}

absl::Duration ThreadRunQueueTime() {
  // "cpu_ns runq_ns timeslices" (Documentation/scheduler/sched-stats.rst).
  std::FILE* file = std::fopen("/proc/thread-self/schedstat", "r");
  if (file == nullptr) return absl::ZeroDuration();
  unsigned long long cpu_ns = 0, runq_ns = 0;
  const int fields = std::fscanf(file, "%llu %llu", &cpu_ns, &runq_ns);
  std::fclose(file);
  return fields == 2 ? absl::Nanoseconds(runq_ns) : absl::ZeroDuration();
}

LoadPhaseTimer::LoadPhaseTimer()
    : last_wall_(absl::Now()), last_cpu_(ThreadCpuTime()), last_runq_(ThreadRunQueueTime()) {}

void LoadPhaseTimer::Mark(absl::string_view name) {
  const absl::Time wall = absl::Now();
  const absl::Duration cpu = ThreadCpuTime();
  const absl::Duration runq = ThreadRunQueueTime();
  LoadPhase* phase = nullptr;
  for (LoadPhase& existing : phases_) {
    if (existing.name == name) phase = &existing;
  }
  if (phase == nullptr) phase = &phases_.emplace_back(LoadPhase{std::string(name), {}, {}, {}});
  phase->wall += wall - last_wall_;
  phase->cpu += cpu - last_cpu_;
  phase->runq += runq - last_runq_;
  last_wall_ = wall;
  last_cpu_ = cpu;
  last_runq_ = runq;
}

std::string FormatLoadPhases(const std::vector<LoadPhase>& phases) {
  std::string out;
  for (const LoadPhase& phase : phases) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", phase.name, " ", Short(phase.wall));
    if (phase.cpu < phase.wall * 0.9) {
      absl::StrAppend(&out, " (cpu ", Short(phase.cpu), ", runq ", Short(phase.runq), ")");
    }
  }
  return out;
}

}  // namespace onepass
