#include "common/cpu_list.h"

#include <sched.h>

#include <thread>
#include <vector>

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

// On its own thread, so the test runner's affinity stays as it was.
TEST(CpuListTest, PinCurrentThreadNarrowsTheThreadsMaskToOneCpu) {
  const int cpu = AllowedCpus().back();
  std::vector<int> mask_after;
  absl::Status pinned;
  std::thread thread([&] {
    pinned = PinCurrentThread(cpu);
    mask_after = AllowedCpus();  // sched_getaffinity(0): the calling thread's mask
  });
  thread.join();
  ASSERT_TRUE(pinned.ok()) << pinned;
  EXPECT_THAT(mask_after, ElementsAre(cpu));
}

TEST(CpuListTest, PinCurrentThreadReportsCpusItCannotUse) {
  std::vector<int> mask_after;
  absl::Status outside;
  absl::Status negative;
  std::thread thread([&] {
    outside = PinCurrentThread(CPU_SETSIZE - 1);  // no test machine has 1024 CPUs
    negative = PinCurrentThread(-1);
    mask_after = AllowedCpus();
  });
  thread.join();
  EXPECT_FALSE(outside.ok());
  EXPECT_FALSE(outside.message().empty());
  EXPECT_FALSE(negative.ok());
  EXPECT_EQ(mask_after, AllowedCpus()) << "a failed pin must leave the mask alone";
}

}  // namespace
}  // namespace onepass
