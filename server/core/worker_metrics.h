// What a worker publishes beyond its counters (server/core/stats.h) for the metrics listener
// (server/ops/metrics_server.h): a histogram of accept-to-close time, the connections parked now,
// accept pauses by errno, and a heartbeat stamped by the worker's own event loop.
//
// Written by the owning worker's thread only, read by the metrics thread: relaxed atomics
// updated with load+store (a plain mov on x86, no locked instruction), cache-line aligned so
// that no line is shared between workers. Reading never stalls the worker.
#ifndef ONEPASS_SERVER_CORE_WORKER_METRICS_H_
#define ONEPASS_SERVER_CORE_WORKER_METRICS_H_

#include <time.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/types/span.h"

namespace onepass {

// Monotonic nanoseconds. clock_gettime(CLOCK_MONOTONIC) is served by the vDSO: no syscall,
// about 20 ns, so the single pass keeps its four syscalls.
inline int64_t MonotonicNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Upper bounds of the accept-to-close histogram's buckets [s]; +Inf is implicit. From 50 us (a
// single pass on loopback) to the longest a connection may live (timeouts, keepalive).
inline constexpr std::array<double, 16> kLatencyBucketBounds = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
    0.025,   0.05,   0.1,     0.25,   0.5,   1,      2.5,   10};

// A histogram value as read: per-bucket (not cumulative) counts, the last one +Inf.
struct HistogramSnapshot {
  std::array<uint64_t, kLatencyBucketBounds.size() + 1> buckets{};
  uint64_t sum_nanos = 0;

  uint64_t count() const;
  HistogramSnapshot& operator+=(const HistogramSnapshot& other);
};

// The errnos that pause accepting (docs/design.md "Limits, and why"), each its own series.
enum class AcceptPauseCause { kEmfile, kEnfile, kEnobufs, kEnomem, kOther, kCount };
AcceptPauseCause AcceptPauseCauseOf(int error);
// "EMFILE", ..., "other": the label value.
const char* AcceptPauseCauseName(AcceptPauseCause cause);

struct WorkerMetricsSnapshot {
  HistogramSnapshot accept_to_close;
  uint64_t parked_now = 0;
  std::array<uint64_t, static_cast<size_t>(AcceptPauseCause::kCount)> accept_pauses{};
  int64_t heartbeat_nanos = 0;  // MonotonicNanos() of the last stamp; 0 before the loop ran
};

class alignas(64) WorkerMetrics {
 public:
  WorkerMetrics();
  ~WorkerMetrics();
  WorkerMetrics(const WorkerMetrics&) = delete;
  WorkerMetrics& operator=(const WorkerMetrics&) = delete;

  // The owning worker only. `started` is MonotonicNanos() at accept.
  void RecordClose(int64_t started, int64_t now) {
    const int64_t nanos = now > started ? now - started : 0;
    const double seconds = static_cast<double>(nanos) * 1e-9;
    size_t bucket = 0;
    while (bucket < kLatencyBucketBounds.size() && seconds > kLatencyBucketBounds[bucket]) {
      ++bucket;
    }
    Add(buckets_[bucket], 1);
    Add(sum_nanos_, static_cast<uint64_t>(nanos));
  }
  void SetParked(size_t parked) { parked_now_.store(parked, std::memory_order_relaxed); }
  void CountAcceptPause(int error) {
    Add(accept_pauses_[static_cast<size_t>(AcceptPauseCauseOf(error))], 1);
  }
  void Beat() { heartbeat_.store(MonotonicNanos(), std::memory_order_relaxed); }

  // The owning worker's core stamps the heartbeat every kHeartbeatPeriodMs from a timer of its
  // loop. A worker stuck in one callback stops stamping; that is what /healthz looks for.

  // Any thread.
  WorkerMetricsSnapshot Read() const;

 private:
  static void Add(std::atomic<uint64_t>& counter, uint64_t n) {
    counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::array<std::atomic<uint64_t>, kLatencyBucketBounds.size() + 1> buckets_{};
  std::atomic<uint64_t> sum_nanos_{0};
  std::atomic<uint64_t> parked_now_{0};
  std::array<std::atomic<uint64_t>, static_cast<size_t>(AcceptPauseCause::kCount)> accept_pauses_{};
  std::atomic<int64_t> heartbeat_{0};
};

// How often a worker stamps its heartbeat [ms].
inline constexpr int kHeartbeatPeriodMs = 250;

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_WORKER_METRICS_H_
