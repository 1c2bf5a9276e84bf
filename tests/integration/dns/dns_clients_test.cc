// End to end: the real onepassd serving its embedded zone, asked by real clients over TCP
// (kdig, dig, drill) and by a raw client for pipelining and keepalive.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using onepass::testing::ProgramExists;
using onepass::testing::RunCommand;
using onepass::testing::ServerProcess;
using ::testing::HasSubstr;

class DnsClientsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(server_, nullptr); }

  static std::string Run(const std::vector<std::string>& argv) {
    auto result = RunCommand(argv, absl::Seconds(20));
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return "";
    EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
    return result->out;
  }
  static std::string Port() { return absl::StrCat(server_->port()); }

  static ServerProcess* server_;
};
ServerProcess* DnsClientsTest::server_ = nullptr;

TEST_F(DnsClientsTest, KdigExactAnswer) {
  if (!ProgramExists("kdig")) GTEST_SKIP() << "kdig (knot-dnsutils) is not installed";
  const std::string out = Run({"kdig", "+tcp", "+retry=0", "+timeout=5", "@127.0.0.1", "-p", Port(),
                               "www.example.com", "A"});
  EXPECT_THAT(out, HasSubstr("status: NOERROR"));
  EXPECT_THAT(out, HasSubstr("Flags: qr aa rd;"));
  EXPECT_THAT(out, HasSubstr("ANSWER: 1; AUTHORITY: 2; ADDITIONAL: 4"));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "www\\.example\\.com\\.\\s+3600\\s+IN\\s+A\\s+192\\.0\\.2\\.80"));
  EXPECT_THAT(out, HasSubstr("(TCP)"));
}

TEST_F(DnsClientsTest, KdigNxDomainAndEdns) {
  if (!ProgramExists("kdig")) GTEST_SKIP() << "kdig (knot-dnsutils) is not installed";
  const std::string out = Run({"kdig", "+tcp", "+retry=0", "+timeout=5", "+dnssec", "@127.0.0.1",
                               "-p", Port(), "nx.example.com", "A"});
  EXPECT_THAT(out, HasSubstr("status: NXDOMAIN"));
  EXPECT_THAT(out, HasSubstr("Flags: qr aa rd;"));
  EXPECT_THAT(out, HasSubstr("Version: 0; flags: do; UDP size: 1232 B"));
  EXPECT_THAT(out, ::testing::ContainsRegex("example\\.com\\.\\s+300\\s+IN\\s+SOA"));
}

TEST_F(DnsClientsTest, DigReferralAndWildcard) {
  if (!ProgramExists("dig")) GTEST_SKIP() << "dig (bind9-dnsutils) is not installed";
  std::string out = Run({"dig", "+tcp", "+tries=1", "+time=5", "@127.0.0.1", "-p", Port(),
                         "host.sub.example.com", "A"});
  EXPECT_THAT(out, HasSubstr("status: NOERROR"));
  EXPECT_THAT(out, HasSubstr("flags: qr rd;"));  // a referral is not authoritative
  EXPECT_THAT(out,
              ::testing::ContainsRegex(
                  "sub\\.example\\.com\\.\\s+3600\\s+IN\\s+NS\\s+ns\\.sub\\.example\\.com\\."));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "ns\\.sub\\.example\\.com\\.\\s+3600\\s+IN\\s+A\\s+192\\.0\\.2\\.201"));
  out = Run({"dig", "+tcp", "+tries=1", "+time=5", "+short", "@127.0.0.1", "-p", Port(),
             "anything.wild.example.com", "TXT"});
  EXPECT_EQ(out, "\"synthesised\"\n");
  out = Run({"dig", "+tcp", "+tries=1", "+time=5", "+short", "@127.0.0.1", "-p", Port(),
             "alias.example.com", "A"});
  EXPECT_EQ(out, "ftp.example.com.\nwww.example.com.\n192.0.2.80\n");
}

TEST_F(DnsClientsTest, DigRefusedOutsideZone) {
  if (!ProgramExists("dig")) GTEST_SKIP() << "dig (bind9-dnsutils) is not installed";
  const std::string out =
      Run({"dig", "+tcp", "+tries=1", "+time=5", "@127.0.0.1", "-p", Port(), "example.org", "A"});
  EXPECT_THAT(out, HasSubstr("status: REFUSED"));
  EXPECT_THAT(out, HasSubstr("EDE: 20 (Not Authoritative)"));
}

TEST_F(DnsClientsTest, DrillMxWithAdditional) {
  if (!ProgramExists("drill")) GTEST_SKIP() << "drill (ldnsutils) is not installed";
  const std::string out = Run({"drill", "-t", "-p", Port(), "example.com", "MX", "@127.0.0.1"});
  EXPECT_THAT(out, HasSubstr("rcode: NOERROR"));
  EXPECT_THAT(out, HasSubstr("flags: qr aa rd"));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "example\\.com\\.\\s+3600\\s+IN\\s+MX\\s+10 mail\\.example\\.com\\."));
  EXPECT_THAT(out, ::testing::ContainsRegex(
                       "mail\\.example\\.com\\.\\s+3600\\s+IN\\s+A\\s+192\\.0\\.2\\.25"));
}

TEST_F(DnsClientsTest, PipelinedQueriesAnsweredInOrder) {
  std::vector<std::vector<uint8_t>> queries;
  for (uint16_t id = 1; id <= 20; ++id) {
    queries.push_back(
        testing::MakeQuery(id % 3 == 0 ? "nx.example.com" : "www.example.com", "A", {.id = id}));
  }
  auto replies = testing::ExchangeTcp(server_->port(), queries);
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), 20u);
  for (uint16_t id = 1; id <= 20; ++id) {
    auto r = testing::DecodeResponse((*replies)[id - 1]);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->id, id);
    EXPECT_EQ(r->rcode, id % 3 == 0 ? 3 : 0);
  }
}

TEST_F(DnsClientsTest, ThousandPipelinedQueriesPastTheOutputLimit) {
  // ~185 KB of answers: the handler stops at 64 KiB of unsent output, the server sends, and
  // the handler resumes on the queries still buffered (RFC 9210 §4.5).
  std::vector<std::vector<uint8_t>> queries;
  for (int i = 0; i < 1000; ++i) {
    queries.push_back(testing::MakeQuery("www.example.com", "A", {.id = static_cast<uint16_t>(i)}));
  }
  auto replies = testing::ExchangeTcp(server_->port(), queries, absl::Seconds(20));
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), 1000u);
  for (int i = 0; i < 1000; i += 97) {
    auto r = testing::DecodeResponse((*replies)[i]);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->id, i);
    EXPECT_EQ(r->answer.size(), 1u);
  }
}

TEST_F(DnsClientsTest, ServerClosesAfterAnswerWithoutKeepalive) {
  auto client = onepass::testing::TcpClient::Connect("127.0.0.1", server_->port());
  ASSERT_TRUE(client.ok()) << client.status();
  const auto query = testing::Framed(testing::MakeQuery("www.example.com", "A"));
  ASSERT_TRUE(client->Send(std::string(query.begin(), query.end())).ok());
  // No half-close from us: the server must close by itself after the answer.
  auto reply = client->ReadUntilClose(absl::Seconds(5));
  ASSERT_TRUE(reply.ok()) << reply.status();
  auto frames = testing::SplitFrames(*reply);
  ASSERT_TRUE(frames.ok()) << frames.status();
  EXPECT_EQ(frames->size(), 1u);
}

TEST_F(DnsClientsTest, GarbageIsClosedWithoutAnswer) {
  auto replies = testing::ExchangeTcp(server_->port(), {{1, 2, 3}});
  ASSERT_TRUE(replies.ok()) << replies.status();
  EXPECT_TRUE(replies->empty());
}

TEST(DnsKeepaliveTest, EchoesKeepaliveAndKeepsConnectionOpen) {
  auto server = ServerProcess::Start(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--keepalive-ms", "3000"});
  ASSERT_TRUE(server.ok()) << server.status();
  auto client = onepass::testing::TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok()) << client.status();
  // Two queries one after the other on the same connection, each waiting for its answer.
  for (uint16_t id = 1; id <= 2; ++id) {
    const auto query = testing::Framed(
        testing::MakeQuery("www.example.com", "A", {.id = id, .edns = true, .keepalive = true}));
    ASSERT_TRUE(client->Send(std::string(query.begin(), query.end())).ok());
    std::string reply;
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (absl::Now() < deadline) {
      char buf[4096];
      const ssize_t n = recv(client->fd(), buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) reply.append(buf, n);
      if (n == 0) break;
      auto frames = testing::SplitFrames(reply);
      if (frames.ok() && frames->size() == 1) break;
      absl::SleepFor(absl::Milliseconds(5));
    }
    auto frames = testing::SplitFrames(reply);
    ASSERT_TRUE(frames.ok()) << frames.status();
    ASSERT_EQ(frames->size(), 1u) << "query " << id;
    auto r = testing::DecodeResponse((*frames)[0]);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->id, id);
    EXPECT_EQ(r->opt_options, std::vector<std::string>{"11:001e"});  // 3000 ms = 30 x 100 ms
  }
}

TEST(DnsZoneFlagTest, BadZoneFileFailsStartupWithFileAndLine) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/bad.zone");
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("$ORIGIN bad.test.\n@ 60 IN SOA ns hm 1 2 3 4 5\nwww 60 IN A 300.1.1.1\n", f);
  fclose(f);
  auto result = RunCommand({onepass::testing::OnepassdPath(), "--handler", "dns", "--listen",
                            "127.0.0.1:0", "--zone", path},
                           absl::Seconds(20));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->exit_code, 0);
  EXPECT_THAT(result->err, HasSubstr(absl::StrCat(path, ":3:")));
}

// The exit stats line counts every answer by RCODE and kind (handlers/dns/dns_counters.h).
TEST(DnsStatsTest, ExitStatsCountResponsesByRcode) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "2"});
  ASSERT_TRUE(server.ok()) << server.status();
  constexpr int kQueries = 20;
  for (int i = 0; i < kQueries; ++i) {
    auto frames =
        testing::ExchangeTcp((*server)->port(), {testing::MakeQuery("www.example.com.", "A")});
    ASSERT_TRUE(frames.ok()) << frames.status();
    ASSERT_EQ(frames->size(), 1u);
  }
  auto nx =
      testing::ExchangeTcp((*server)->port(), {testing::MakeQuery("nothere.example.com.", "A")});
  ASSERT_TRUE(nx.ok()) << nx.status();
  ASSERT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
  const std::string stats = (*server)->ReadStdout();
  using onepass::testing::StatValue;
  EXPECT_EQ(StatValue(stats, "dns_responses{rcode=\"NOERROR\"}"), kQueries) << stats;
  EXPECT_EQ(StatValue(stats, "dns_answers{kind=\"answer\"}"), kQueries) << stats;
  EXPECT_EQ(StatValue(stats, "dns_precompiled"), kQueries) << stats;
  EXPECT_EQ(StatValue(stats, "dns_responses{rcode=\"NXDOMAIN\"}"), 1) << stats;
  EXPECT_EQ(StatValue(stats, "dns_answers{kind=\"nxdomain\"}"), 1) << stats;
  EXPECT_EQ(StatValue(stats, "dns_responses{rcode=\"SERVFAIL\"}"), 0) << stats;
}

// --check loads the zones as a start would, prints what it loaded and exits 0, binding
// nothing: the port given to --listen is held by another socket (without SO_REUSEPORT) here,
// so a real start would fail.
TEST(DnsCheckTest, CheckPrintsZonesAndOpensNoSocket) {
  const int held = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(held, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(held, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(held, 1), 0);
  socklen_t length = sizeof(address);
  ASSERT_EQ(getsockname(held, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string listen_at = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  const std::string zone = std::string(ONEPASS_SOURCE_DIR) + "/tests/data/example.com.zone";
  auto result = RunCommand({onepass::testing::OnepassdPath(), "--check", "--handler", "dns",
                            "--listen", listen_at, "--zone", zone},
                           absl::Seconds(20));
  close(held);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->err;
  EXPECT_THAT(result->out,
              HasSubstr("dns: zone example.com. serial 2026112901: 26 names, 36 records\n"));
  EXPECT_THAT(result->out, HasSubstr("check: dns data OK"));
  EXPECT_THAT(result->out, ::testing::Not(HasSubstr("ready")));
}

// Every bad file is reported, each error with file and line (up to --dns_zone_max_errors per
// file), and the exit status is 1.
TEST(DnsCheckTest, CheckReportsEveryBadFile) {
  const std::string dir = ::testing::TempDir();
  const std::string bad_ttl = absl::StrCat(dir, "/check_ttl.zone");
  const std::string bad_cname = absl::StrCat(dir, "/check_cname.zone");
  FILE* f = fopen(bad_ttl.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs(
      "$ORIGIN a.test.\n@ 60 IN SOA ns hm 1 2 3 4 5\nwww 1x IN A 192.0.2.1\n"
      "ok IN A 192.0.2.2\nmx IN MX 10\nz IN BOGUS 1\n",
      f);
  fclose(f);
  f = fopen(bad_cname.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("$ORIGIN b.test.\n@ 60 IN SOA ns hm 1 2 3 4 5\nwww IN CNAME x\nwww IN TXT y\n", f);
  fclose(f);
  auto result = RunCommand({onepass::testing::OnepassdPath(), "--check", "--handler", "dns",
                            "--listen", "127.0.0.1:0", "--zone", bad_ttl, "--zone", bad_cname},
                           absl::Seconds(20));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 1);
  EXPECT_THAT(result->err, HasSubstr(bad_ttl + ":3: bad TTL '1x'"));
  EXPECT_THAT(result->err, HasSubstr(bad_ttl + ":5: MX: MX takes"));
  EXPECT_THAT(result->err, HasSubstr(bad_ttl + ":6: unknown record type 'BOGUS'"));
  EXPECT_THAT(result->err, HasSubstr(bad_cname + ":4: CNAME and other data"));
  EXPECT_THAT(result->out, ::testing::Not(HasSubstr("check: dns data OK")));

  result = RunCommand({onepass::testing::OnepassdPath(), "--check", "--handler", "dns", "--listen",
                       "127.0.0.1:0", "--zone", bad_ttl, "--dns_zone_max_errors", "2"},
                      absl::Seconds(20));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 1);
  EXPECT_THAT(result->err, HasSubstr(bad_ttl + ":5: MX: MX takes"));
  EXPECT_THAT(result->err, HasSubstr(bad_ttl + ": stopped after 2 errors"));
  EXPECT_THAT(result->err, ::testing::Not(HasSubstr("BOGUS")));
}

}  // namespace
}  // namespace onepass::dns
