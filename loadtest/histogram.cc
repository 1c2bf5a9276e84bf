#include "loadtest/histogram.h"

#include <algorithm>
#include <cmath>

namespace onepass::load {
namespace {

constexpr uint64_t kExactLimit = uint64_t{1} << Histogram::kSubBucketBits;
constexpr int kHalf = 1 << (Histogram::kSubBucketBits - 1);  // buckets per octave

}  // namespace

int Histogram::BucketCount() {
  // Exact values, then one group of kHalf buckets per octave from 2^kSubBucketBits up to
  // 2^kMaxExponent, plus one overflow bucket.
  return static_cast<int>(kExactLimit) + (kMaxExponent - kSubBucketBits) * kHalf + 1;
}

int Histogram::BucketIndex(uint64_t value) {
  if (value < kExactLimit) return static_cast<int>(value);
  int exponent = 63 - __builtin_clzll(value);  // >= kSubBucketBits
  if (exponent >= kMaxExponent) return BucketCount() - 1;
  int shift = exponent - (kSubBucketBits - 1);
  int mantissa = static_cast<int>(value >> shift);  // in [kHalf, 2 * kHalf)
  return static_cast<int>(kExactLimit) + (exponent - kSubBucketBits) * kHalf + (mantissa - kHalf);
}

uint64_t Histogram::BucketLowest(int index) {
  if (index < static_cast<int>(kExactLimit)) return static_cast<uint64_t>(index);
  if (index >= BucketCount() - 1) return uint64_t{1} << kMaxExponent;
  int offset = index - static_cast<int>(kExactLimit);
  int exponent = kSubBucketBits + offset / kHalf;
  uint64_t mantissa = static_cast<uint64_t>(kHalf + offset % kHalf);
  return mantissa << (exponent - (kSubBucketBits - 1));
}

uint64_t Histogram::BucketHighest(int index) {
  if (index >= BucketCount() - 1) return UINT64_MAX;
  return BucketLowest(index + 1) - 1;
}

Histogram::Histogram() : counts_(BucketCount(), 0) {}

void Histogram::Record(uint64_t value) {
  ++counts_[BucketIndex(value)];
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  sum_ += value;
}

void Histogram::Merge(const Histogram& other) {
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  sum_ += other.sum_;
}

void Histogram::Clear() {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  min_ = UINT64_MAX;
  max_ = 0;
  sum_ = 0;
}

double Histogram::Mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_ / count_); }

uint64_t Histogram::ValueAtPercentile(double percentile) const {
  if (count_ == 0) return 0;
  percentile = std::clamp(percentile, 0.0, 100.0);
  // Nearest rank: the ceil(p/100 * n)-th smallest value (at least the first).
  uint64_t rank =
      static_cast<uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts_.size(); ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      int index = static_cast<int>(i);
      uint64_t low = BucketLowest(index);
      uint64_t high = BucketHighest(index);
      uint64_t mid = low + (high - low) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

}  // namespace onepass::load
