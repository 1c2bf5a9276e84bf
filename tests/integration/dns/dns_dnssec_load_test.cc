// What onepassd says when it loads signed zones: one line per zone with the earliest RRSIG
// expiry (a warning when it is near or past), again at SIGHUP; a zone above the NSEC3
// iteration cap is refused with a clear message.
#include <signal.h>

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/signed_zone.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace onepass::dns {
namespace {

using onepass::testing::ServerProcess;

const std::string kSourceDir = ONEPASS_SOURCE_DIR;
const std::string kSigned = kSourceDir + "/tests/data/dnssec/example.org.signed";

// Polls the server's stderr (all of it so far) until it contains `text` `count` times
// (bounded: 10 s).
bool WaitForLog(ServerProcess& server, const std::string& text, int count = 1) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  std::string log;
  while (absl::Now() < deadline) {
    log = server.ReadStderr();
    int seen = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1)) ++seen;
    if (seen >= count) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  ADD_FAILURE() << "no '" << text << "' (x" << count << ") in:\n" << log;
  return false;
}

TEST(DnssecLoadTest, ReportsEarliestExpiryAtLoadAndReload) {
  auto server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--zone", kSigned});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string line =
      "dns: zone example.org. signed (NSEC3), earliest signature expiry 2090-01-01 00:00:00 UTC";
  ASSERT_TRUE(WaitForLog(**server, line));
  kill((*server)->pid(), SIGHUP);
  EXPECT_TRUE(WaitForLog(**server, line, 2));  // the reload reports it again
  EXPECT_EQ((*server)->Stop(), 0);
}

TEST(DnssecLoadTest, WarnsWithinTheWindow) {
  auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--zone",
                                      kSigned, "--dns-signature-warn-days", "30000"});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(WaitForLog(**server, "dns: zone example.org.: signatures expire soon"));
  EXPECT_EQ((*server)->Stop(), 0);
}

TEST(DnssecLoadTest, WarnsAboutExpiredSignatures) {
  if (!onepass::testing::ProgramExists("ldns-signzone")) GTEST_SKIP() << "no ldns-signzone";
  auto keys = testing::SignedZone::Make(kSourceDir + "/tests/data/dnssec/example.org.zone",
                                        "example.org", testing::Denial::kNsec, /*sign=*/false);
  ASSERT_TRUE(keys.ok()) << keys.status();
  auto sign = onepass::testing::RunCommand(
      {"sh", "-c",
       absl::StrCat("cd '", (*keys)->dir(),
                    "' && ls K*.private | sed 's/[.]private$//' | "
                    "xargs ldns-signzone -i 20200101000000 -e 20200201000000 -f old.signed zone")},
      absl::Seconds(60));
  ASSERT_TRUE(sign.ok() && sign->exit_code == 0) << sign->err;
  auto server = ServerProcess::Start(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--zone", (*keys)->dir() + "/old.signed"});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(WaitForLog(**server,
                         "dns: zone example.org.: signatures EXPIRED: earliest expiry 2020-02-01"));
  EXPECT_EQ((*server)->Stop(), 0);
}

TEST(DnssecLoadTest, RefusesNsec3IterationsAboveTheCap) {
  auto zone = testing::SignedZone::Make(kSourceDir + "/tests/data/dnssec/example.org.zone",
                                        "example.org", testing::Denial::kNsec3);  // 5 iterations
  if (!zone.ok() && absl::StrContains(zone.status().message(), "not installed")) {
    GTEST_SKIP() << zone.status();
  }
  ASSERT_TRUE(zone.ok()) << zone.status();
  auto refused = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--zone",
                                       (*zone)->path(), "--dns-nsec3-max-iterations", "4"});
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "NSEC3 iterations 5 above the limit"))
      << refused.status();
  auto accepted = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--zone",
                                        (*zone)->path(), "--dns-nsec3-max-iterations", "5"});
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ((*accepted)->Stop(), 0);
}

}  // namespace
}  // namespace onepass::dns
