// The database loader and the rendered replies: the embedded database, exact reply text, and
// every kind of error in a file reported with its line.
#include "handlers/whois/whois_db.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "handlers/whois/whois_embedded_db.h"

namespace onepass::whois {
namespace {

std::string Body(const WhoisSnapshot& snapshot, bool found, const ReplyPieces& reply) {
  if (!found) return "<not found>";
  std::string text;
  for (int i = 0; i < reply.count; ++i) absl::StrAppend(&text, reply.pieces[i]);
  return text;
}

std::string Domain(const WhoisSnapshot& snapshot, absl::string_view name) {
  ReplyPieces reply;
  const bool found = snapshot.FindDomain(name, &reply);
  return Body(snapshot, found, reply);
}

TEST(WhoisDbTest, EmbeddedDatabaseLoads) {
  auto snapshot = LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  const WhoisSnapshotStats& stats = (*snapshot)->stats();
  EXPECT_EQ(stats.domains, 5u);
  EXPECT_EQ(stats.registrars, 2u);
  EXPECT_EQ(stats.nameservers, 4u);
  EXPECT_EQ(stats.contacts, 3u);
  EXPECT_EQ((*snapshot)->last_update(), "2026-11-29T00:00:00Z");
}

// Line by line as the .com registry (Verisign) lays out a signed domain: field order, no space
// after the colon of an empty field, upper-case names, one "DNSSEC DS Data" line per DS record
// (KEYTAG ALGORITHM DIGEST-TYPE DIGEST, digest in upper-case hex), then the ICANN form URL.
TEST(WhoisDbTest, ExampleComRendersInVerisignLayout) {
  auto snapshot = LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(Domain(**snapshot, "EXAMPLE.COM"),
            "   Domain Name: EXAMPLE.COM\r\n"
            "   Registry Domain ID: 2336799_DOMAIN_COM-VRSN\r\n"
            "   Registrar WHOIS Server: whois.iana.org\r\n"
            "   Registrar URL: http://res-dom.iana.org\r\n"
            "   Updated Date: 2024-08-14T07:01:34Z\r\n"
            "   Creation Date: 1995-08-14T04:00:00Z\r\n"
            "   Registry Expiry Date: 2026-08-13T04:00:00Z\r\n"
            "   Registrar: RESERVED-Internet Assigned Numbers Authority\r\n"
            "   Registrar IANA ID: 376\r\n"
            "   Registrar Abuse Contact Email:\r\n"
            "   Registrar Abuse Contact Phone:\r\n"
            "   Domain Status: clientDeleteProhibited "
            "https://icann.org/epp#clientDeleteProhibited\r\n"
            "   Domain Status: clientTransferProhibited "
            "https://icann.org/epp#clientTransferProhibited\r\n"
            "   Domain Status: clientUpdateProhibited "
            "https://icann.org/epp#clientUpdateProhibited\r\n"
            "   Name Server: A.IANA-SERVERS.NET\r\n"
            "   Name Server: B.IANA-SERVERS.NET\r\n"
            "   DNSSEC: signedDelegation\r\n"
            "   DNSSEC DS Data: 370 13 2 "
            "73EBE89D33B245DF7C895E27475942A5892DAF6762DE84A086C5643FCBD0762A\r\n"
            "   DNSSEC DS Data: 370 13 1 DFA2297E20ED055D3CDFD97584075EECDB660B35\r\n"
            "   URL of the ICANN Whois Inaccuracy Complaint Form: https://www.icann.org/wicf/\r\n");
  const absl::string_view tail = (*snapshot)->tail();
  EXPECT_TRUE(absl::StartsWith(
      tail, ">>> Last update of whois database: 2026-11-29T00:00:00Z <<<\r\n\r\nFor more"));
  EXPECT_TRUE(absl::EndsWith(tail, "to modify these terms at any time.\r\n"));
  EXPECT_FALSE(absl::StrContains(absl::StrReplaceAll(tail, {{"\r\n", ""}}), "\n"));
}

TEST(WhoisDbTest, UnsignedDomainAndDsNormalization) {
  auto snapshot = LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  const std::string net = Domain(**snapshot, "EXAMPLE.NET");
  EXPECT_TRUE(absl::StrContains(net,
                                "   DNSSEC: unsigned\r\n"
                                "   URL of the ICANN Whois Inaccuracy Complaint Form: "));
  EXPECT_FALSE(absl::StrContains(net, "DS Data"));

  // Lower-case digests are printed upper case; a bare signedDelegation still loads.
  const std::string dates = "2020-01-01T00:00:00Z\t2021-01-01T00:00:00Z\t2030-01-01T00:00:00Z";
  const std::string db =
      absl::StrCat("meta\tlast-update\t2026-01-01T00:00:00Z\n",
                   "registrar\t1\tR\tw\tu\tae\tap\ta\tp\te\n", "domain\ta.test\tA-1\t1\t", dates,
                   "\tok\t\tsignedDelegation:12345 8 2 ", std::string(64, 'b'), ",7 253 200 0a0b\n",
                   "domain\tb.test\tB-1\t1\t", dates, "\tok\t\tsignedDelegation\n");
  auto loaded = LoadWhoisDbText(db, "test");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string a = Domain(**loaded, "A.TEST");
  EXPECT_TRUE(absl::StrContains(a, absl::StrCat("   DNSSEC: signedDelegation\r\n"
                                                "   DNSSEC DS Data: 12345 8 2 ",
                                                std::string(64, 'B'),
                                                "\r\n"
                                                "   DNSSEC DS Data: 7 253 200 0A0B\r\n")))
      << a;
  EXPECT_TRUE(absl::StrContains(Domain(**loaded, "B.TEST"),
                                "   DNSSEC: signedDelegation\r\n   URL of the ICANN"));
}

TEST(WhoisDbTest, ThickDomainCarriesContactBlocks) {
  auto snapshot = LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  const std::string org = Domain(**snapshot, "EXAMPLE.ORG");
  EXPECT_TRUE(absl::StrContains(org,
                                "   Registry Registrant ID: EXR-1001\r\n"
                                "   Registrant Name: Jane Registrant\r\n"
                                "   Registrant Organization: Example Holdings LLC\r\n"));
  EXPECT_TRUE(absl::StrContains(org, "   Admin Name: John Admin\r\n"));
  EXPECT_TRUE(absl::StrContains(org, "   Tech Country: DE\r\n"));
  // Contacts sit between the statuses and the name servers, as in thick registries.
  EXPECT_LT(org.find("Domain Status:"), org.find("Registrant Name:"));
  EXPECT_LT(org.find("Tech Email:"), org.find("Name Server:"));
  // A thin domain has none.
  EXPECT_FALSE(absl::StrContains(Domain(**snapshot, "EXAMPLE.COM"), "Registrant"));
}

TEST(WhoisDbTest, OtherObjects) {
  auto snapshot = LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ReplyPieces reply;
  ASSERT_TRUE((*snapshot)->FindNameserver("A.IANA-SERVERS.NET", &reply));
  EXPECT_EQ(Body(**snapshot, true, reply),
            "   Server Name: A.IANA-SERVERS.NET\r\n"
            "   IP Address: 199.43.135.53\r\n"
            // IPv6 glue as the registry prints it: every group, upper case, no "::".
            "   IP Address: 2001:500:8F:0:0:0:0:53\r\n"
            "   Registrar: RESERVED-Internet Assigned Numbers Authority\r\n"
            "   Registrar WHOIS Server: whois.iana.org\r\n"
            "   Registrar URL: http://res-dom.iana.org\r\n");
  reply = {};
  ASSERT_TRUE((*snapshot)->FindRegistrar("EXAMPLE REGISTRAR, INC.", &reply));
  EXPECT_TRUE(absl::StartsWith(Body(**snapshot, true, reply),
                               "   Registrar Name: Example Registrar, Inc.\r\n"
                               "   Registrar IANA ID: 9999\r\n"));
  reply = {};
  ASSERT_TRUE((*snapshot)->FindRegistrar("9999", &reply));
  EXPECT_TRUE(absl::StrContains(Body(**snapshot, true, reply), "Example Registrar, Inc."));
  reply = {};
  ASSERT_TRUE((*snapshot)->FindContact("EXR-1003", &reply));
  EXPECT_TRUE(absl::StartsWith(Body(**snapshot, true, reply),
                               "   Contact ID: EXR-1003\r\n   Name: Network Operations\r\n"));
  reply = {};
  EXPECT_FALSE((*snapshot)->FindDomain("NOSUCH.COM", &reply));
  EXPECT_FALSE((*snapshot)->FindDomain("example.com", &reply));  // keys are upper case
  EXPECT_FALSE((*snapshot)->FindRegistrar("12345", &reply));
  EXPECT_FALSE((*snapshot)->FindContact("NOBODY", &reply));
}

TEST(WhoisDbTest, SharedPiecesAreStoredOnce) {
  auto snapshot = LoadWhoisDbText(EmbeddedWhoisDb(), "embedded");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ReplyPieces com, net;
  ASSERT_TRUE((*snapshot)->FindDomain("EXAMPLE.COM", &com));
  ASSERT_TRUE((*snapshot)->FindDomain("EXAMPLE.NET", &net));
  // Same registrar and statuses: the very same bytes, not copies.
  EXPECT_EQ(com.pieces[1].data(), net.pieces[1].data());  // registrar top
  EXPECT_EQ(com.pieces[3].data(), net.pieces[3].data());  // registrar middle
  EXPECT_EQ(com.pieces[4].data(), net.pieces[4].data());  // statuses
  ASSERT_EQ(com.count, 6);                                // a thin domain has no contact piece
  EXPECT_NE(com.pieces[5].data(), net.pieces[5].data());  // DNSSEC differs
}

const char kRegistrar[] = "registrar\t1\tR\tw\tu\tae\tap\ta\tp\te\n";
const char kDomainPrefix[] = "domain\tname.test\tID-1\t1\t2020-01-01T00:00:00Z\t";

TEST(WhoisDbTest, ErrorsNameTheLine) {
  const std::string dates = "2021-01-01T00:00:00Z\t2030-01-01T00:00:00Z";
  struct Case {
    std::string text;
    std::string expected;  // in the message after "t.db:LINE: "
    int line;
  };
  const std::vector<Case> cases = {
      {"bogus\tx\n", "unknown record type \"bogus\"", 1},
      {"# comment\n\nmeta\tlast-update\tyesterday\n", "is not RFC 3339", 3},
      {"meta\tcolor\tblue\n", "unknown meta key", 1},
      {"meta\tlast-update\n", "3 expected", 1},
      {"registrar\t0\tR\tw\tu\tae\tap\ta\tp\te\n", "not a registrar IANA ID", 1},
      {"registrar\tx1\tR\tw\tu\tae\tap\ta\tp\te\n", "not a registrar IANA ID", 1},
      {"registrar\t1\t\tw\tu\tae\tap\ta\tp\te\n", "NAME is empty", 1},
      {std::string(kRegistrar) + kRegistrar, "defined twice", 2},
      {"registrar\t1\tR\n", "10 or 11 expected", 1},
      {"registrar\t1\tR\t\t\t\t\t\t\t\tftp://x/\n", "not an http(s) URL", 1},
      {"contact\tbad handle\tn\to\ts\tc\tst\tp\tcc\tph\te\n", "contact handle", 1},
      {"contact\tH\tn\n", "11 expected", 1},
      {"nameserver\tns1.test\t\t192.0.2.300\n", "neither IPv4 nor IPv6", 1},
      {"nameserver\tns1.test\t7\t192.0.2.1\n", "registrar IANA ID 7 is not defined", 1},
      {"nameserver\tns_1.test\t\t\n", "not a valid host name", 1},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tunsigned\n" + kRegistrar,
       "defined twice", 3},
      {std::string(kDomainPrefix) + dates + "\tok\t\tunsigned\n",
       "registrar IANA ID 1 is not defined", 1},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tfrozen\t\tunsigned\n",
       "not an EPP domain status", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\t\t\tunsigned\n", "no domain status", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tmaybe\n", "DNSSEC \"maybe\"", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tsignedDelegation:\n",
       "1 to 16 DS records expected", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tsignedDelegation:1 8 2\n",
       "is not KEYTAG", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tsignedDelegation:65536 8 1 " +
           std::string(40, 'a') + "\n",
       "is not KEYTAG", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tsignedDelegation:1 8 2 ABCD\n",
       "not 64 hex digits (digest type 2)", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tsignedDelegation:1 8 9 ABC\n",
       "an even number of hex digits", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tsignedDelegation:1 8 1 " +
           std::string(38, 'a') + "zz\n",
       "not 40 hex digits", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\tns..x\tunsigned\n",
       "not a valid host name", 2},
      {std::string(kRegistrar) + kDomainPrefix + "2021-13-01T00:00:00Z\t2030-01-01T00:00:00Z" +
           "\tok\t\tunsigned\n",
       "updated date", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tunsigned\tNOBODY\t\t\n",
       "contact handle NOBODY is not defined", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tunsigned\tA\n", "10 or 13", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tunsigned\n" + kDomainPrefix +
           dates + "\tok\t\tunsigned\n",
       "domain NAME.TEST is defined twice", 3},
      {std::string(kRegistrar) +
           "domain\tb\xc3\xbc"
           "cher.test\tID\t1\t" +
           dates + "\t2030-01-01T00:00:00Z\tok\t\tunsigned\n",
       "A-labels", 2},
      {std::string(kRegistrar) + kDomainPrefix + dates + "\tok\t\tunsigned\x01\n",
       "control character", 2},
      {"registrar\t1\tR\xff\tw\tu\tae\tap\ta\tp\te\n", "not valid UTF-8", 1},
      {std::string("# ") + std::string(70000, 'x') + "\n", "at most 65536", 1},
  };
  for (const Case& c : cases) {
    auto snapshot = LoadWhoisDbText(c.text, "t.db");
    ASSERT_FALSE(snapshot.ok()) << c.expected;
    const std::string message(snapshot.status().message());
    EXPECT_TRUE(absl::StartsWith(message, absl::StrCat("t.db:", c.line, ": ")))
        << "got: " << message << "\nwanted line " << c.line;
    EXPECT_TRUE(absl::StrContains(message, c.expected))
        << "got: " << message << "\nwanted: " << c.expected;
  }
}

TEST(WhoisDbTest, TextWithoutLastUpdateIsAnError) {
  auto snapshot = LoadWhoisDbText(kRegistrar, "t.db");
  ASSERT_FALSE(snapshot.ok());
  EXPECT_TRUE(absl::StrContains(snapshot.status().message(), "last-update"));
}

TEST(WhoisDbTest, FooterCanBeReplaced) {
  auto snapshot = LoadWhoisDbText(
      "meta\tlast-update\t2026-01-01T00:00:00Z\nmeta\tfooter\tOur terms.\nmeta\tfooter\t\n"
      "meta\tfooter\tSecond paragraph.\n",
      "t.db");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->tail(),
            ">>> Last update of whois database: 2026-01-01T00:00:00Z <<<\r\n\r\n"
            "Our terms.\r\n\r\nSecond paragraph.\r\n");
}

class WhoisDbFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/whois_db_test_" + std::to_string(getpid()) + ".db";
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void Write(const std::string& text) {
    std::ofstream out(path_, std::ios::binary);
    out << text;
  }
  std::string path_;
};

TEST_F(WhoisDbFileTest, LoadsFileWithCrlfAndNoFinalNewline) {
  std::string text(EmbeddedWhoisDb());
  text = absl::StrReplaceAll(text, {{"\n", "\r\n"}});
  text.resize(text.size() - 2);  // no line end after the last record
  Write(text);
  auto snapshot = LoadWhoisDbFile(path_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->stats().domains, 5u);
  ReplyPieces reply;
  EXPECT_TRUE((*snapshot)->FindDomain("ONEPASS.TEST", &reply));  // the last line
}

TEST_F(WhoisDbFileTest, MissingLastUpdateUsesModificationTime) {
  Write(std::string(kRegistrar));
  auto snapshot = LoadWhoisDbFile(path_);
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_TRUE(IsRfc3339Utc((*snapshot)->last_update())) << (*snapshot)->last_update();
}

TEST_F(WhoisDbFileTest, ErrorsNameTheFileAndLine) {
  Write(std::string("meta\tlast-update\t2026-01-01T00:00:00Z\n") + kRegistrar + "oops\n");
  auto snapshot = LoadWhoisDbFile(path_);
  ASSERT_FALSE(snapshot.ok());
  EXPECT_TRUE(absl::StartsWith(snapshot.status().message(), path_ + ":3: ")) << snapshot.status();
}

TEST_F(WhoisDbFileTest, OverlongLineAcrossReadBlocksIsAnError) {
  Write(std::string("meta\tfooter\t") + std::string(3 << 20, 'x') + "\n");
  auto snapshot = LoadWhoisDbFile(path_);
  ASSERT_FALSE(snapshot.ok());
  EXPECT_TRUE(absl::StrContains(snapshot.status().message(), ":1: line of")) << snapshot.status();
}

TEST(WhoisDbTest, MissingFileIsAnError) {
  auto snapshot = LoadWhoisDbFile("/nonexistent/whois.db");
  ASSERT_FALSE(snapshot.ok());
  EXPECT_TRUE(absl::StrContains(snapshot.status().message(), "/nonexistent/whois.db"));
}

TEST(IsRfc3339UtcTest, Forms) {
  EXPECT_TRUE(IsRfc3339Utc("2026-01-02T03:04:05Z"));
  EXPECT_TRUE(IsRfc3339Utc("2016-12-31T23:59:60Z"));
  EXPECT_FALSE(IsRfc3339Utc("2026-01-02 03:04:05Z"));
  EXPECT_FALSE(IsRfc3339Utc("2026-01-02T03:04:05+00:00"));
  EXPECT_FALSE(IsRfc3339Utc("2026-00-02T03:04:05Z"));
  EXPECT_FALSE(IsRfc3339Utc("2026-01-32T03:04:05Z"));
  EXPECT_FALSE(IsRfc3339Utc("2026-01-02T24:04:05Z"));
  EXPECT_FALSE(IsRfc3339Utc(""));
}

}  // namespace
}  // namespace onepass::whois
