#include "loadtest/pacer.h"

#include <cmath>

namespace onepass::load {

Pacer::Pacer(double rate, int index, int threads, int64_t start_ns)
    : period_ns_(1e9 * threads / rate),
      offset_ns_(1e9 * index / rate),
      start_ns_(start_ns),
      next_ns_(IntendedTime(0)) {}

// Computed from k each time (not by adding periods) so rounding never accumulates.
int64_t Pacer::IntendedTime(uint64_t k) const {
  return start_ns_ + static_cast<int64_t>(std::llround(offset_ns_ + period_ns_ * k));
}

void Pacer::Advance() {
  ++issued_;
  next_ns_ = IntendedTime(issued_);
}

uint64_t Pacer::PendingBefore(int64_t end_ns) const {
  if (end_ns <= next_ns_) return 0;
  // Intended times k >= issued_ with start + offset + period*k < end.
  double last = std::ceil((end_ns - start_ns_ - offset_ns_) / period_ns_);  // first k at/after end
  if (last <= static_cast<double>(issued_)) return 0;
  return static_cast<uint64_t>(last) - issued_;
}

}  // namespace onepass::load
