#include "loadtest/pacer.h"

#include <cstdint>
#include <set>

#include "gtest/gtest.h"

namespace onepass::load {
namespace {

TEST(PacerTest, OneThreadIsEvenlySpaced) {
  Pacer pacer(1000, 0, 1, 5'000'000);  // 1000/s: every 1 ms from t=5 ms
  for (int k = 0; k < 5000; ++k) {
    ASSERT_EQ(pacer.next_ns(), 5'000'000 + int64_t{k} * 1'000'000) << k;
    pacer.Advance();
  }
  EXPECT_EQ(pacer.issued(), 5000u);
}

TEST(PacerTest, ThreadsInterleaveWithoutCollisionsOrDrift) {
  // 3 threads sharing 30000/s: together one start every 33.3 us, none twice.
  std::set<int64_t> starts;
  for (int thread = 0; thread < 3; ++thread) {
    Pacer pacer(30000, thread, 3, 0);
    for (int k = 0; k < 10000; ++k) {
      starts.insert(pacer.next_ns());
      pacer.Advance();
    }
  }
  ASSERT_EQ(starts.size(), 30000u);
  int64_t previous = -1;
  int index = 0;
  for (int64_t start : starts) {
    // The i-th start overall is within 1 ns of i / rate.
    EXPECT_NEAR(static_cast<double>(start), index * 1e9 / 30000, 1.0);
    EXPECT_GT(start, previous);
    previous = start;
    ++index;
  }
}

TEST(PacerTest, PendingCountsTheStartsLeftBeforeTheEnd) {
  Pacer pacer(1000, 0, 1, 0);                       // starts at 0, 1 ms, 2 ms, ...
  EXPECT_EQ(pacer.PendingBefore(10'000'000), 10u);  // 0..9 ms
  for (int i = 0; i < 4; ++i) pacer.Advance();
  EXPECT_EQ(pacer.PendingBefore(10'000'000), 6u);
  EXPECT_EQ(pacer.PendingBefore(9'500'000), 6u);
  EXPECT_EQ(pacer.PendingBefore(3'000'000), 0u);
}

}  // namespace
}  // namespace onepass::load
