#include "tests/support/server_process.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace onepass::testing {
namespace {

using ::testing::HasSubstr;

// The TLS part of an exit line, as server/tls/tls_stats.cc formats it (two fallback reasons,
// the handshakes each engine served).
std::string ExitLine(int full, int resumed, int not_tls13, int onepass, int openssl) {
  return absl::StrCat(
      "tls listening on 127.0.0.1:853\nstats accepted=9 served=9 tls_handshakes_full=", full,
      " tls_handshakes_resumed=", resumed,
      " tls_failed=0 tls13=1 tls_fallback{reason=\"not_tls13\"}=", not_tls13,
      " tls_fallback{reason=\"group\"}=0 tls_failed{reason=\"limit\"}=0",
      " tls_handshakes_engine{engine=\"onepass\"}=", onepass,
      " tls_handshakes_engine{engine=\"openssl\"}=", openssl, "\n");
}

TEST(CheckOnepassEngineServedTest, AHandshakeOfTheEngineOrNoneCompletedPasses) {
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(2, 1, 1, 2, 1)).ok());
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(1, 0, 0, 1, 0)).ok());
  EXPECT_TRUE(CheckOnepassEngineServed(ExitLine(0, 0, 2, 0, 0)).ok());  // none completed
}

TEST(CheckOnepassEngineServedTest, EveryHandshakeOpenSslsIsAFailure) {
  const absl::Status none = CheckOnepassEngineServed(ExitLine(3, 0, 3, 0, 3));
  EXPECT_FALSE(none.ok());
  EXPECT_THAT(none.message(), HasSubstr("served none of the 3"));
}

TEST(CheckOnepassEngineServedTest, NoTlsCountersIsAFailure) {
  EXPECT_FALSE(CheckOnepassEngineServed("stats accepted=1 served=1\n").ok());
  // The handshake counts without the engines' (an onepassd older than the engine counter).
  EXPECT_FALSE(
      CheckOnepassEngineServed(
          "stats tls_handshakes_full=2 tls_handshakes_resumed=0 tls_fallback{reason=\"x\"}=0\n")
          .ok());
  EXPECT_FALSE(CheckOnepassEngineServed("").ok());
}

}  // namespace
}  // namespace onepass::testing
