#include "server/core/stats.h"

#include "gtest/gtest.h"

namespace onepass {
namespace {

TEST(StatsTest, SumsAndFormatsInOrder) {
  WorkerStats first;
  WorkerStats second;
  WorkerStats::Add(first.accepted, 3);
  WorkerStats::Add(second.accepted, 4);
  WorkerStats::Add(second.served);
  StatsSnapshot total = first.Read();
  total += second.Read();
  EXPECT_EQ(total.accepted, 7u);
  EXPECT_EQ(total.served, 1u);
  const std::string text = total.Format();
  // The load tester and the tests read these keys: keep them first and spelled so.
  EXPECT_EQ(text.rfind("accepted=7 served=1 closed_incomplete=0 timeouts=0 rejected=0 errors=0", 0),
            0u)
      << text;
  EXPECT_NE(text.find(" sends=0"), std::string::npos);
}

// Totals are computed from their causes when read, never counted by hand.
TEST(StatsTest, TotalsAreTheSumsOfTheirCauses) {
  WorkerStats first;
  WorkerStats second;
  WorkerStats::Add(first.read_timeouts, 2);
  WorkerStats::Add(second.write_timeouts);
  WorkerStats::Add(first.rejected_oversize);
  WorkerStats::Add(first.rejected_pool_full, 3);
  WorkerStats::Add(second.rejected_per_client, 5);
  WorkerStats::Add(first.reset_errors, 7);
  WorkerStats::Add(second.accept_errors, 11);
  const StatsSnapshot one = first.Read();
  EXPECT_EQ(one.timeouts, 2u);
  EXPECT_EQ(one.rejected, 4u);
  EXPECT_EQ(one.errors, 7u);
  StatsSnapshot total = one;
  total += second.Read();
  EXPECT_EQ(total.timeouts, 3u);
  EXPECT_EQ(total.rejected, 9u);
  EXPECT_EQ(total.errors, 18u);
  EXPECT_EQ(total.Format().rfind(
                "accepted=0 served=0 closed_incomplete=0 timeouts=3 rejected=9 errors=18 ", 0),
            0u)
      << total.Format();
  // Idle closes and lingering cuts are not timeouts.
  WorkerStats third;
  WorkerStats::Add(third.idle_closes);
  WorkerStats::Add(third.linger_cut);
  EXPECT_EQ(third.Read().timeouts, 0u);
}

TEST(StatsTest, WorkersShareNoCacheLine) {
  EXPECT_EQ(alignof(WorkerStats), 64u);
  EXPECT_EQ(sizeof(WorkerStats) % 64, 0u);
}

}  // namespace
}  // namespace onepass
