// Small things both client cores need alike: the clocks, the common start, a thread's share
// of --count, and the local port range.
#ifndef ONEPASS_LOADTEST_RUN_CLOCK_H_
#define ONEPASS_LOADTEST_RUN_CLOCK_H_

#include <cstdint>

namespace onepass::load {

int64_t MonotonicNs();  // CLOCK_MONOTONIC [ns]
int64_t ThreadCpuNs();  // the calling thread's CPU time, user + system [ns]

// Sleeps until CLOCK_MONOTONIC reaches `when_ns` (the threads' common start).
void WaitUntil(int64_t when_ns);

// Thread `index` of `threads`'s share of `count` connections; UINT64_MAX when count is 0
// (no bound).
uint64_t ThreadShare(uint64_t count, int index, int threads);

struct LocalPortRange {
  int first = 32768;
  int last = 60999;
};
// net.ipv4.ip_local_port_range (the default above when unreadable).
LocalPortRange ReadLocalPortRange();

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_RUN_CLOCK_H_
