// CPU time as the benchmark scripts count it (loadtest/bench_lib.sh server_cpu_ns,
// ksoftirqd_ns): the scheduler's runtime of every task of a process (/proc/PID/task/*/schedstat,
// which includes the softirq work that ran in its context and the io_uring workers), plus the
// ksoftirqd threads of the CPUs it runs on (receive work steered there that ran outside it).
// The same count for the client and the server, so the two per connection compare.
#ifndef ONEPASS_LOADTEST_CPU_ACCOUNTING_H_
#define ONEPASS_LOADTEST_CPU_ACCOUNTING_H_

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace onepass::load {

// Summed schedstat runtime of every task of `pid` [ns]; 0 when it is gone or unreadable.
int64_t ProcessSchedNs(pid_t pid);

// The calling thread's schedstat runtime [ns] (a thread's entry leaves /proc/PID/task when it
// exits, so each client thread reads its own before it ends).
int64_t ThreadSchedNs();

// The ksoftirqd threads of `cpus` (none for an empty list).
std::vector<pid_t> KsoftirqdPids(const std::vector<int>& cpus);

class CpuMeter {
 public:
  // `pid`'s tasks and the ksoftirqd threads of `cpus`.
  CpuMeter(pid_t pid, const std::vector<int>& cpus);
  void Start();
  // Since Start() [ns]: the process's tasks, and the ksoftirqd threads.
  int64_t process_ns() const;
  int64_t softirq_ns() const;

 private:
  int64_t SoftirqNow() const;

  pid_t pid_;
  std::vector<pid_t> softirq_pids_;
  int64_t process_start_ = 0;
  int64_t softirq_start_ = 0;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_CPU_ACCOUNTING_H_
