// The connection limits against the descriptor limit (server/descriptor_limit.h): pure
// arithmetic, and the soft limit raised to the hard one.
#include "server/descriptor_limit.h"

#include <sys/resource.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace onepass {
namespace {

TEST(DescriptorLimitTest, FitsOrLowersOrRefuses) {
  const int fixed = FixedDescriptors(/*workers=*/2, /*listen_addresses=*/1);
  // Room enough: unchanged, nothing to say.
  absl::StatusOr<DescriptorFit> fit = FitConnections(fixed + 5000, 5000, 2, 1);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->max_connections, 5000);
  EXPECT_EQ(fit->note, "");
  // A shell's 1024: lowered to what fits, and said in one line.
  fit = FitConnections(1024, 5000, 2, 1);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->max_connections, 1024 - fixed);
  EXPECT_TRUE(absl::StrContains(fit->note, "--max-connections 5000 lowered to")) << fit->note;
  EXPECT_EQ(fit->note.find('\n'), std::string::npos);
  // Not even one connection per worker: refused, saying what to raise.
  fit = FitConnections(fixed + 1, 5000, 2, 1);
  ASSERT_FALSE(fit.ok());
  EXPECT_TRUE(absl::StrContains(fit.status().message(), "ulimit")) << fit.status();
}

TEST(DescriptorLimitTest, SoftLimitIsRaisedToTheHardLimit) {
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  rlimit low = saved;
  low.rlim_cur = saved.rlim_max / 2;  // below the hard limit, whatever it is
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  absl::StatusOr<DescriptorFit> fit = RaiseDescriptorLimit(1, 1, 1);
  rlimit now{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, saved.rlim_max);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->max_connections, 1);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
}

}  // namespace
}  // namespace onepass
