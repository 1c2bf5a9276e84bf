// A log-linear latency histogram in the style of HdrHistogram, small and allocation-free after
// construction, so every client thread can record each transaction without locks.
//
// Values are unsigned integers in whatever unit the caller picks (the load tester records
// nanoseconds and reports microseconds). Values below 2^kSubBucketBits are counted exactly;
// above, each power of two [2^e, 2^(e+1)) is cut into 2^(kSubBucketBits-1) equal buckets, so a
// bucket is at most 1/128 of its lower bound wide. Percentiles report the bucket's midpoint
// (clamped to the exact min and max), which is within 0.4% of every value in the bucket: well
// under the 1% the reports promise.
#ifndef ONEPASS_LOADTEST_HISTOGRAM_H_
#define ONEPASS_LOADTEST_HISTOGRAM_H_

#include <cstdint>
#include <vector>

namespace onepass::load {

class Histogram {
 public:
  // Bits of mantissa kept per value: 2^kSubBucketBits exact values, then 128 buckets per octave.
  static constexpr int kSubBucketBits = 8;
  // Values at or above 2^kMaxExponent (about 18 minutes in ns) are counted in the last bucket;
  // max() still reports them exactly.
  static constexpr int kMaxExponent = 40;

  Histogram();

  void Record(uint64_t value);
  // Adds every count of `other` (per-thread histograms are merged at the end and once a second).
  void Merge(const Histogram& other);
  void Clear();

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ == 0 ? 0 : min_; }
  uint64_t max() const { return max_; }
  double Mean() const;

  // The value at `percentile` (0..100) by the nearest-rank rule: the smallest recorded value
  // such that at least percentile% of values are <= it. 0 when empty. Relative error <= 0.4%.
  uint64_t ValueAtPercentile(double percentile) const;

  // Bucket arithmetic, exposed for tests.
  static int BucketIndex(uint64_t value);
  static uint64_t BucketLowest(int index);
  static uint64_t BucketHighest(int index);  // inclusive
  static int BucketCount();

 private:
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
  long double sum_ = 0;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_HISTOGRAM_H_
