#include "server/core/worker_metrics.h"

#include <cerrno>

namespace onepass {

uint64_t HistogramSnapshot::count() const {
  uint64_t total = 0;
  for (uint64_t n : buckets) total += n;
  return total;
}

HistogramSnapshot& HistogramSnapshot::operator+=(const HistogramSnapshot& other) {
  for (size_t i = 0; i < buckets.size(); ++i) buckets[i] += other.buckets[i];
  sum_nanos += other.sum_nanos;
  return *this;
}

AcceptPauseCause AcceptPauseCauseOf(int error) {
  switch (error) {
    case EMFILE:
      return AcceptPauseCause::kEmfile;
    case ENFILE:
      return AcceptPauseCause::kEnfile;
    case ENOBUFS:
      return AcceptPauseCause::kEnobufs;
    case ENOMEM:
      return AcceptPauseCause::kEnomem;
    default:
      return AcceptPauseCause::kOther;
  }
}

const char* AcceptPauseCauseName(AcceptPauseCause cause) {
  switch (cause) {
    case AcceptPauseCause::kEmfile:
      return "EMFILE";
    case AcceptPauseCause::kEnfile:
      return "ENFILE";
    case AcceptPauseCause::kEnobufs:
      return "ENOBUFS";
    case AcceptPauseCause::kEnomem:
      return "ENOMEM";
    case AcceptPauseCause::kOther:
    case AcceptPauseCause::kCount:
      break;
  }
  return "other";
}

WorkerMetrics::WorkerMetrics() = default;

WorkerMetrics::~WorkerMetrics() = default;

WorkerMetricsSnapshot WorkerMetrics::Read() const {
  WorkerMetricsSnapshot snapshot;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    snapshot.accept_to_close.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
  }
  snapshot.accept_to_close.sum_nanos = sum_nanos_.load(std::memory_order_relaxed);
  snapshot.parked_now = parked_now_.load(std::memory_order_relaxed);
  for (size_t i = 0; i < accept_pauses_.size(); ++i) {
    snapshot.accept_pauses[i] = accept_pauses_[i].load(std::memory_order_relaxed);
  }
  snapshot.heartbeat_nanos = heartbeat_.load(std::memory_order_relaxed);
  return snapshot;
}

}  // namespace onepass
