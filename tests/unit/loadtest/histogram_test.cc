#include "loadtest/histogram.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace onepass::load {
namespace {

// The nearest-rank percentile of a sorted vector: what the histogram approximates.
uint64_t ExactPercentile(const std::vector<uint64_t>& sorted, double percentile) {
  size_t rank = static_cast<size_t>(std::ceil(percentile / 100.0 * sorted.size()));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

void ExpectWithinOnePercent(const std::vector<uint64_t>& values) {
  Histogram histogram;
  for (uint64_t value : values) histogram.Record(value);
  std::vector<uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double percentile : {0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    double exact = static_cast<double>(ExactPercentile(sorted, percentile));
    double approx = static_cast<double>(histogram.ValueAtPercentile(percentile));
    EXPECT_LE(std::abs(approx - exact), 0.01 * exact + 1e-9)
        << "p" << percentile << ": exact " << exact << ", histogram " << approx;
  }
  EXPECT_EQ(histogram.min(), sorted.front());
  EXPECT_EQ(histogram.max(), sorted.back());
  EXPECT_EQ(histogram.count(), values.size());
}

TEST(HistogramTest, EmptyReportsZero) {
  Histogram histogram;
  EXPECT_EQ(histogram.count(), 0u);
  EXPECT_EQ(histogram.ValueAtPercentile(99), 0u);
  EXPECT_EQ(histogram.max(), 0u);
  EXPECT_EQ(histogram.Mean(), 0.0);
}

TEST(HistogramTest, SmallValuesAreExact) {
  Histogram histogram;
  for (uint64_t value = 0; value < 256; ++value) histogram.Record(value);
  for (int percentile = 1; percentile <= 100; ++percentile) {
    uint64_t rank = static_cast<uint64_t>(std::ceil(percentile / 100.0 * 256));
    EXPECT_EQ(histogram.ValueAtPercentile(percentile), rank - 1) << percentile;
  }
}

TEST(HistogramTest, BucketsTileTheRangeWithBoundedWidth) {
  for (int index = 0; index < Histogram::BucketCount() - 1; ++index) {
    uint64_t low = Histogram::BucketLowest(index);
    uint64_t high = Histogram::BucketHighest(index);
    ASSERT_LE(low, high) << index;
    ASSERT_EQ(Histogram::BucketIndex(low), index);
    ASSERT_EQ(Histogram::BucketIndex(high), index);
    ASSERT_EQ(Histogram::BucketLowest(index + 1), high + 1);
    // Width at most 1/128 of the lower bound: the midpoint is within 0.4% of any member.
    if (low >= 256) {
      ASSERT_LE((high - low + 1) * 128, low) << index;
    }
  }
  EXPECT_EQ(Histogram::BucketIndex(UINT64_MAX), Histogram::BucketCount() - 1);
}

TEST(HistogramTest, UniformValuesWithinOnePercent) {
  std::mt19937_64 random(1);
  std::uniform_int_distribution<uint64_t> distribution(1000, 10'000'000);
  std::vector<uint64_t> values(100'000);
  for (uint64_t& value : values) value = distribution(random);
  ExpectWithinOnePercent(values);
}

TEST(HistogramTest, LongTailWithinOnePercent) {
  // Latency-like: a lognormal body in microseconds (as ns) and a few huge stalls.
  std::mt19937_64 random(2);
  std::lognormal_distribution<double> distribution(std::log(200'000.0), 0.7);
  std::vector<uint64_t> values;
  for (int i = 0; i < 50'000; ++i) values.push_back(static_cast<uint64_t>(distribution(random)));
  for (int i = 0; i < 60; ++i) values.push_back(1'000'000'000ULL + i * 12'345'679ULL);
  ExpectWithinOnePercent(values);
}

TEST(HistogramTest, SingleValueIsExact) {
  Histogram histogram;
  histogram.Record(123'456'789);
  EXPECT_EQ(histogram.ValueAtPercentile(50), 123'456'789u);  // clamped to min == max
  EXPECT_EQ(histogram.ValueAtPercentile(99.9), 123'456'789u);
}

TEST(HistogramTest, MergeEqualsRecordingEverything) {
  std::mt19937_64 random(3);
  std::uniform_int_distribution<uint64_t> distribution(1, 1ULL << 35);
  Histogram all, first, second;
  for (int i = 0; i < 10'000; ++i) {
    uint64_t value = distribution(random);
    all.Record(value);
    (i % 3 == 0 ? first : second).Record(value);
  }
  first.Merge(second);
  EXPECT_EQ(first.count(), all.count());
  EXPECT_EQ(first.min(), all.min());
  EXPECT_EQ(first.max(), all.max());
  for (double percentile : {50.0, 90.0, 99.0, 99.9}) {
    EXPECT_EQ(first.ValueAtPercentile(percentile), all.ValueAtPercentile(percentile));
  }
  first.Clear();
  EXPECT_EQ(first.count(), 0u);
  EXPECT_EQ(first.ValueAtPercentile(50), 0u);
}

TEST(HistogramTest, HugeValuesLandInTheLastBucketButMaxIsExact) {
  Histogram histogram;
  histogram.Record(UINT64_MAX / 2);
  histogram.Record(5);
  EXPECT_EQ(histogram.max(), UINT64_MAX / 2);
  EXPECT_EQ(histogram.ValueAtPercentile(100), UINT64_MAX / 2);
  EXPECT_EQ(histogram.ValueAtPercentile(50), 5u);
}

}  // namespace
}  // namespace onepass::load
