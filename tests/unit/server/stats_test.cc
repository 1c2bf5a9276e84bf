#include "server/stats.h"

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

TEST(StatsTest, WorkersShareNoCacheLine) {
  EXPECT_EQ(alignof(WorkerStats), 64u);
  EXPECT_EQ(sizeof(WorkerStats) % 64, 0u);
}

}  // namespace
}  // namespace onepass
