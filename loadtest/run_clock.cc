#include "loadtest/run_clock.h"

#include <time.h>

#include <algorithm>
#include <cstdio>

namespace onepass::load {
namespace {

int64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

int64_t MonotonicNs() { return ClockNs(CLOCK_MONOTONIC); }
int64_t ThreadCpuNs() { return ClockNs(CLOCK_THREAD_CPUTIME_ID); }

void WaitUntil(int64_t when_ns) {
  for (int64_t now = MonotonicNs(); now < when_ns; now = MonotonicNs()) {
    timespec pause = {0, static_cast<long>(std::min<int64_t>(when_ns - now, 100'000'000))};
    nanosleep(&pause, nullptr);
  }
}

uint64_t ThreadShare(uint64_t count, int index, int threads) {
  if (count == 0) return UINT64_MAX;
  return count / threads + (static_cast<uint64_t>(index) < count % threads ? 1 : 0);
}

LocalPortRange ReadLocalPortRange() {
  LocalPortRange range;
  if (FILE* file = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    int first = 0, last = 0;
    if (std::fscanf(file, "%d %d", &first, &last) == 2 && first > 0 && last >= first &&
        last < 65536) {
      range = {first, last};
    }
    std::fclose(file);
  }
  return range;
}

}  // namespace onepass::load
