// TlsServerContext and the --check report: what an operator's files produce, errors that say
// what to do, warnings before a certificate lapses. Ticket key file parsing.
#include "server/tls/tls_server_context.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/tls/ticket_keys.h"
#include "server/tls/tls_check.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::tls {
namespace {

using testing::TestCertOptions;
using testing::TestPkiDir;

TlsConfig ConfigFor(const TestPkiDir& pki) {
  TlsConfig config;
  config.cert_file = pki.chain_file();
  config.key_file = pki.key_file();
  return config;
}

TEST(TlsServerContextTest, LoadsAChainAndSummarizesIt) {
  TestPkiDir pki;
  auto report = CheckTlsConfig(ConfigFor(pki), absl::Now());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(report->warnings.empty());
  EXPECT_TRUE(absl::StrContains(report->summary, "CN = dot.example.test")) << report->summary;
  EXPECT_TRUE(absl::StrContains(report->summary, "2 certificates")) << report->summary;
  EXPECT_TRUE(absl::StrContains(report->summary, "EC prime256v1")) << report->summary;
  EXPECT_TRUE(absl::StrContains(report->summary, "versions: 1.3; alpn: dot"));
  EXPECT_TRUE(absl::StrContains(report->summary, "does not survive a restart"));
}

TEST(TlsServerContextTest, KeyOfAnotherCertificateIsRefusedWithWhatToCompare) {
  TestPkiDir pki;
  TlsConfig config = ConfigFor(pki);
  config.key_file = pki.other_key_file();
  auto context = TlsServerContext::Create(config, absl::Now());
  ASSERT_FALSE(context.ok());
  EXPECT_TRUE(absl::StrContains(context.status().message(), "does not belong"));
  EXPECT_TRUE(absl::StrContains(context.status().message(), "openssl pkey -pubout"));
}

TEST(TlsServerContextTest, MissingOrWrongFilesNameTheFlag) {
  TestPkiDir pki;
  TlsConfig config = ConfigFor(pki);
  config.cert_file = pki.dir() + "/absent.pem";
  auto missing = TlsServerContext::Create(config, absl::Now());
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "--tls-cert")) << missing.status();

  config.cert_file = pki.key_file();  // a key where the chain belongs
  auto not_cert = TlsServerContext::Create(config, absl::Now());
  ASSERT_FALSE(not_cert.ok());
  EXPECT_TRUE(absl::StrContains(not_cert.status().message(), "no PEM certificate"));

  config = ConfigFor(pki);
  config.key_file = pki.chain_file();  // a certificate where the key belongs
  auto not_key = TlsServerContext::Create(config, absl::Now());
  ASSERT_FALSE(not_key.ok());
  EXPECT_TRUE(absl::StrContains(not_key.status().message(), "--tls-key"));

  config = ConfigFor(pki);
  config.ticket_keys_file = pki.WriteFile("keys.txt", "not a key file\n");
  auto bad_keys = TlsServerContext::Create(config, absl::Now());
  ASSERT_FALSE(bad_keys.ok());
  EXPECT_TRUE(absl::StrContains(bad_keys.status().message(), "openssl rand 80"));
}

TEST(TlsServerContextTest, WarnsBeforeAndAfterExpiry) {
  const absl::Time now = absl::Now();
  TestCertOptions soon;
  soon.not_after = now + absl::Hours(24 * 10 + 1);
  TestPkiDir expiring(soon);
  auto report = CheckTlsConfig(ConfigFor(expiring), now);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(report->warnings[0], "in 10 days")) << report->warnings[0];

  TestCertOptions past;
  past.not_before = now - absl::Hours(48);
  past.not_after = now - absl::Hours(24);
  TestPkiDir expired(past);
  report = CheckTlsConfig(ConfigFor(expired), now);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(report->warnings[0], "expired on")) << report->warnings[0];

  TestCertOptions future;
  future.not_before = now + absl::Hours(24);
  TestPkiDir early(future);
  report = CheckTlsConfig(ConfigFor(early), now);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->warnings.size(), 1u);
  EXPECT_TRUE(absl::StrContains(report->warnings[0], "not valid before"));
}

TEST(TlsServerContextTest, AlpnNamesMustFitTheWireFormat) {
  TestPkiDir pki;
  TlsConfig config = ConfigFor(pki);
  config.alpn = {""};
  EXPECT_FALSE(TlsServerContext::Create(config, absl::Now()).ok());
  config.alpn = {std::string(256, 'x')};
  EXPECT_FALSE(TlsServerContext::Create(config, absl::Now()).ok());
}

TEST(TlsServerContextTest, CipherSuitesOpenSslDoesNotKnowAreRefusedNamingTheFlag) {
  TestPkiDir pki;
  TlsConfig config = ConfigFor(pki);
  for (const char* suites : {"", "AES128-GCM-SHA256", "TLS_AES_128_CCM_4_SHA256x"}) {
    config.ciphersuites = suites;
    auto context = TlsServerContext::Create(config, absl::Now());
    ASSERT_FALSE(context.ok()) << suites;
    EXPECT_TRUE(absl::StrContains(context.status().message(), "--tls-ciphersuites"))
        << context.status();
  }
  config.ciphersuites = "TLS_CHACHA20_POLY1305_SHA256";
  EXPECT_TRUE(TlsServerContext::Create(config, absl::Now()).ok());
}

TEST(TicketKeysTest, ParsesKeysNewestFirst) {
  std::string file;
  for (char c : {'1', '2', '3'}) file += std::string(80, c);
  auto keys = ParseTicketKeys(file);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 3u);
  EXPECT_EQ((*keys)[0].name[0], '1');
  EXPECT_EQ((*keys)[2].aes_key[31], '3');
}

TEST(TicketKeysTest, RefusesWhatIsNoKeyFile) {
  const struct {
    std::string bytes;
    const char* says;
  } cases[] = {
      {"", "empty"},
      {std::string(79, 'k'), "not a multiple of 80"},
      {std::string(80 * (kMaxTicketKeys + 1), 'k'), "more than"},
      {std::string(80, 'k') + std::string(80, 'k'), "same name"},
  };
  for (const auto& c : cases) {
    auto keys = ParseTicketKeys(c.bytes);
    ASSERT_FALSE(keys.ok()) << c.says;
    EXPECT_TRUE(absl::StrContains(keys.status().message(), c.says)) << keys.status();
  }
}

TEST(TicketKeysTest, ProcessKeyIsStableAndRandom) {
  const TicketKey& key = ProcessTicketKey();
  EXPECT_EQ(&key, &ProcessTicketKey());
  EXPECT_NE(key.aes_key, TicketKey().aes_key);
}

}  // namespace
}  // namespace onepass::tls
