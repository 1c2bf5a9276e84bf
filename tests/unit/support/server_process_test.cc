#include "tests/support/server_process.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onepass::testing {
namespace {

using ::testing::HasSubstr;

// The TLS part of an exit line, as server/tls/tls_stats.cc formats it (two fallback reasons).
// `more` goes at the end of the line.
std::string ExitLine(int full, int resumed, int not_tls13, int group,
                     const std::string& more = "") {
  return absl::StrCat(
      "tls listening on 127.0.0.1:853\nstats accepted=9 served=9 tls_handshakes_full=", full,
      " tls_handshakes_resumed=", resumed,
      " tls_failed=0 tls13=1 tls_fallback{reason=\"not_tls13\"}=", not_tls13,
      " tls_fallback{reason=\"group\"}=", group, " tls_failed{reason=\"limit\"}=0", more, "\n");
}

TEST(CheckOnepassEngineServedTest, MoreHandshakesThanFallbacksShowTheEngineServed) {
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(3, 1, 1, 2)).ok());
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(1, 0, 0, 0)).ok());
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(0, 0, 2, 0)).ok());  // none completed
}

TEST(CheckOnepassEngineServedTest, AsManyFallbacksAsHandshakesCouldAllBeOpenSsls) {
  const absl::Status all_fell_back = CheckOnepassEngineServed(ExitLine(2, 1, 1, 2));
  EXPECT_FALSE(all_fell_back.ok());
  EXPECT_THAT(all_fell_back.message(), HasSubstr("3 completed, 3 ClientHellos"));
  EXPECT_FALSE(CheckOnepassEngineServed(ExitLine(1, 0, 5, 0)).ok());
}

// Where the exit line counts the handshakes each engine served, that count decides.
TEST(CheckOnepassEngineServedTest, AnExactEngineCountDecides) {
  const std::string engines = " tls_handshakes_engine{engine=\"onepass\"}=";
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(2, 1, 1, 2, engines + "1")).ok());
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(0, 0, 1, 0, engines + "0")).ok());
  const absl::Status none = CheckOnepassEngineServed(ExitLine(3, 0, 0, 0, engines + "0"));
  EXPECT_FALSE(none.ok());
  EXPECT_THAT(none.message(), HasSubstr("served none of the 3"));
}

TEST(CheckOnepassEngineServedTest, NoTlsCountersIsAFailure) {
  EXPECT_FALSE(CheckOnepassEngineServed("stats accepted=1 served=1\n").ok());
  EXPECT_FALSE(CheckOnepassEngineServed("").ok());
}

}  // namespace
}  // namespace onepass::testing
