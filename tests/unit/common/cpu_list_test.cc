#include "common/cpu_list.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onepass {
namespace {

using ::testing::ElementsAre;

TEST(CpuListTest, ParsesRangesAndSingles) {
  auto cpus = ParseCpuList("0-3,8,10-11");
  ASSERT_TRUE(cpus.ok()) << cpus.status();
  EXPECT_THAT(*cpus, ElementsAre(0, 1, 2, 3, 8, 10, 11));
}

TEST(CpuListTest, DropsDuplicates) {
  auto cpus = ParseCpuList("2,1-3");
  ASSERT_TRUE(cpus.ok());
  EXPECT_THAT(*cpus, ElementsAre(2, 1, 3));
}

TEST(CpuListTest, RejectsBadLists) {
  for (const char* bad : {"", ",", "a", "3-1", "-1", "1-", "0-99999", "1,,2"}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
}

TEST(CpuListTest, FormatsRoundTrip) {
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({5}), "5");
  EXPECT_EQ(FormatCpuList({}), "");
}

TEST(CpuListTest, AllowedCpusIsNotEmpty) { EXPECT_FALSE(AllowedCpus().empty()); }

}  // namespace
}  // namespace onepass
