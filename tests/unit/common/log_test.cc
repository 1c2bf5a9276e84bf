// common/log.h: the json format and the per-kind rate limit.
#include "common/log.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace onepass {
namespace {

TEST(LogTest, JsonLineEscapes) {
  SetLogProgramName("prog");
  SetLogFormat(LogFormat::kJson);
  const std::string line =
      FormatLogLine(LogLevel::kWarning, "a \"b\" \\ c\nd", absl::FromUnixSeconds(1700000000));
  SetLogFormat(LogFormat::kText);
  EXPECT_EQ(line,
            "{\"time\":\"2023-11-14T22:13:20.000000Z\",\"level\":\"warning\",\"program\":\"prog\","
            "\"msg\":\"a \\\"b\\\" \\\\ c\\u000ad\"}\n");
  EXPECT_EQ(FormatLogLine(LogLevel::kInfo, "x", absl::Now()), "prog: info: x\n");
}

TEST(LogTest, ParsesFormat) {
  LogFormat format = LogFormat::kText;
  EXPECT_TRUE(ParseLogFormat("json", format));
  EXPECT_EQ(format, LogFormat::kJson);
  EXPECT_TRUE(ParseLogFormat("text", format));
  EXPECT_EQ(format, LogFormat::kText);
  EXPECT_FALSE(ParseLogFormat("xml", format));
}

TEST(LogRateLimitTest, BurstThenSuppressedThenNextWindow) {
  SetLogRateDefaults(3, absl::Seconds(10));
  LogRateLimit limit("test");
  const absl::Time start = absl::FromUnixSeconds(1000);
  int allowed = 0;
  for (int i = 0; i < 100; ++i) allowed += limit.Allow(start + absl::Milliseconds(i)) ? 1 : 0;
  EXPECT_EQ(allowed, 3);
  // A new window: allowed again (and the 97 suppressed ones are reported as one line).
  EXPECT_TRUE(limit.Allow(start + absl::Seconds(11)));
  EXPECT_TRUE(limit.Allow(start + absl::Seconds(11)));
  EXPECT_TRUE(limit.Allow(start + absl::Seconds(12)));
  EXPECT_FALSE(limit.Allow(start + absl::Seconds(12)));
  SetLogRateDefaults(10, absl::Seconds(60));
}

}  // namespace
}  // namespace onepass
