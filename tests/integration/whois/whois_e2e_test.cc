// End-to-end: the real onepassd with --handler whois, asked by the real `whois` client
// (Debian's whois package) and by a raw socket for what no well-behaved client sends.
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"

namespace onepass::whois {
namespace {

using ::onepass::testing::CommandResult;
using ::onepass::testing::RunCommand;
using ::onepass::testing::ServerProcess;
using ::onepass::testing::TcpClient;

constexpr absl::string_view kLastUpdate =
    ">>> Last update of whois database: 2026-11-29T00:00:00Z <<<\r\n";
constexpr absl::string_view kFooterEnd = "to modify these terms at any time.\r\n";

CommandResult RunOk(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(20));
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  EXPECT_FALSE(result->timed_out) << argv[0];
  return *result;
}

// Sends `bytes` on a fresh connection (then shuts down the sending side if asked) and returns
// everything the server sent before closing.
std::string Exchange(int port, absl::string_view bytes, bool shutdown_write = false) {
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port);
  EXPECT_TRUE(client.ok()) << client.status();
  if (!client.ok()) return "<no connection>";
  EXPECT_TRUE(client->Send(bytes).ok());
  if (shutdown_write) client->ShutdownWrite();
  absl::StatusOr<std::string> reply = client->ReadUntilClose(absl::Seconds(10));
  EXPECT_TRUE(reply.ok()) << reply.status();
  return reply.ok() ? *reply : "<no close>";
}

void ExpectOneErrorLine(const std::string& reply, absl::string_view error) {
  EXPECT_TRUE(absl::StartsWith(reply, error)) << reply.substr(0, 200);
  const size_t first_line_end = reply.find("\r\n");
  ASSERT_NE(first_line_end, std::string::npos);
  EXPECT_TRUE(absl::StartsWith(absl::string_view(reply).substr(first_line_end + 2), kLastUpdate))
      << reply.substr(0, 200);
  EXPECT_TRUE(absl::EndsWith(reply, kFooterEnd));
}

class WhoisEndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(::onepass::testing::ProgramExists("whois")) << "install Debian's whois package";
    auto server = ServerProcess::Start({"--handler", "whois", "--listen", "127.0.0.1:0",
                                        "--workers", "2", "--read-timeout-ms", "500"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(), 0) << server_->ReadStderr();
    }
    delete server_;
    server_ = nullptr;
  }
  static int port() { return server_->port(); }

  std::string Whois(const std::vector<std::string>& query) {
    std::vector<std::string> argv = {"whois", "-h", "127.0.0.1", "-p", std::to_string(port())};
    argv.insert(argv.end(), query.begin(), query.end());
    const CommandResult result = RunOk(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  }

  static ServerProcess* server_;
};

ServerProcess* WhoisEndToEndTest::server_ = nullptr;

TEST_F(WhoisEndToEndTest, WhoisClientGetsExampleCom) {
  const std::string out = Whois({"example.com"});
  for (const char* line :
       {"   Domain Name: EXAMPLE.COM", "   Registry Domain ID: 2336799_DOMAIN_COM-VRSN",
        "   Registrar WHOIS Server: whois.iana.org", "   Creation Date: 1995-08-14T04:00:00Z",
        "   Registrar IANA ID: 376",
        "   Domain Status: clientTransferProhibited "
        "https://icann.org/epp#clientTransferProhibited",
        "   Name Server: A.IANA-SERVERS.NET", "   DNSSEC: signedDelegation",
        "URL of the ICANN Whois Inaccuracy Complaint Form: https://www.icann.org/wicf/",
        ">>> Last update of whois database: 2026-11-29T00:00:00Z <<<", "TERMS OF USE:"}) {
    EXPECT_TRUE(absl::StrContains(out, line)) << "missing: " << line << "\n" << out;
  }
}

TEST_F(WhoisEndToEndTest, WhoisClientQueryForms) {
  EXPECT_TRUE(
      absl::StrContains(Whois({"--", "domain example.org"}), "Registrant Name: Jane Registrant"));
  EXPECT_TRUE(absl::StrContains(Whois({"--", "nameserver a.iana-servers.net"}),
                                "Server Name: A.IANA-SERVERS.NET"));
  EXPECT_TRUE(absl::StrContains(Whois({"--", "registrar 9999"}),
                                "Registrar Name: Example Registrar, Inc."));
  EXPECT_TRUE(absl::StrContains(Whois({"--", "contact EXR-1003"}), "Name: Network Operations"));
  // The client converts the IDN to an A-label itself before sending.
  EXPECT_TRUE(absl::StrContains(Whois({"b\xc3\xbc"
                                       "cher.example"}),
                                "Domain Name: XN--BCHER-KVA.EXAMPLE"));
  const std::string none = Whois({"nosuch.example"});
  EXPECT_TRUE(absl::StrContains(none, "No match for \"NOSUCH.EXAMPLE\".")) << none;
  EXPECT_TRUE(absl::StrContains(none, "TERMS OF USE:")) << none;
}

TEST_F(WhoisEndToEndTest, RawReplyIsCrlfTextEndingWithTheFooter) {
  const std::string reply = Exchange(port(), "example.com\r\n");
  EXPECT_TRUE(absl::StartsWith(reply, "   Domain Name: EXAMPLE.COM\r\n")) << reply;
  EXPECT_TRUE(absl::StrContains(reply, kLastUpdate));
  EXPECT_TRUE(absl::EndsWith(reply, kFooterEnd));
  for (size_t i = 0; i < reply.size(); ++i) {
    if (reply[i] == '\n') {
      ASSERT_EQ(reply[i - 1], '\r') << "bare LF at " << i;
    }
  }
}

TEST_F(WhoisEndToEndTest, RawUtf8QueryIsConvertedByTheServer) {
  const std::string reply = Exchange(port(),
                                     "B\xc3\x9c"
                                     "CHER.example\r\n");
  EXPECT_TRUE(absl::StartsWith(reply, "   Domain Name: XN--BCHER-KVA.EXAMPLE\r\n")) << reply;
  ExpectOneErrorLine(Exchange(port(), "\xe2\x98\x83\xe2\x80\x8d.example\r\n"),
                     "Error: invalid internationalized domain name: ");
  ExpectOneErrorLine(Exchange(port(), "\xc3\x28.example\r\n"), "Error: query is not valid UTF-8.");
}

TEST_F(WhoisEndToEndTest, MalformedQueriesGetOneErrorLineAndClose) {
  ExpectOneErrorLine(Exchange(port(), std::string(513, 'a') + "\r\n"), "Error: query too long.");
  // No line end at all: the error comes as soon as the limit is passed, not at the timeout.
  ExpectOneErrorLine(Exchange(port(), std::string(4000, 'a')), "Error: query too long.");
  ExpectOneErrorLine(Exchange(port(), std::string("exam\0ple.com\r\n", 14)),
                     "Error: query contains a NUL byte.");
  ExpectOneErrorLine(Exchange(port(), "exam\x01ple.com\r\n"),
                     "Error: query contains a control character.");
  ExpectOneErrorLine(Exchange(port(), "\r\n"), "Error: empty query;");
  ExpectOneErrorLine(Exchange(port(), "list everything please\r\n"), "Error: unknown query;");
}

TEST_F(WhoisEndToEndTest, PeerCloseWithoutLineEnd) {
  // The bytes sent before the shutdown are the query.
  const std::string reply = Exchange(port(), "example.net", /*shutdown_write=*/true);
  EXPECT_TRUE(absl::StartsWith(reply, "   Domain Name: EXAMPLE.NET\r\n")) << reply;
  // Nothing sent: closed without a reply.
  EXPECT_EQ(Exchange(port(), "", /*shutdown_write=*/true), "");
}

TEST_F(WhoisEndToEndTest, NcSendsAQueryWithoutNewline) {
  if (!::onepass::testing::ProgramExists("nc")) GTEST_SKIP() << "nc is not installed";
  absl::StatusOr<CommandResult> result =
      RunCommand({"nc", "-N", "-w", "5", "127.0.0.1", std::to_string(port())}, absl::Seconds(20),
                 "example.com");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(absl::StartsWith(result->out, "   Domain Name: EXAMPLE.COM\r\n")) << result->out;
}

TEST_F(WhoisEndToEndTest, ClientThatNeverEndsTheLineIsCutByTheReadTimeout) {
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port());
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(client->Send("example.c").ok());
  // --read-timeout-ms 500: the server closes, without a reply, well within 10 s.
  absl::StatusOr<std::string> reply = client->ReadUntilClose(absl::Seconds(10));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "");
}

std::string TempPath(absl::string_view name) {
  return absl::StrCat(::testing::TempDir(), "/whois_e2e_", getpid(), "_", name);
}

TEST(WhoisDatabaseFlagsTest, ServesAGeneratedDatabase) {
  const std::string path = TempPath("gen.db");
  absl::StatusOr<CommandResult> generated =
      RunCommand({"python3", ONEPASS_SOURCE_DIR "/scripts/gen-whois-db.py", "--domains", "2000",
                  "--seed", "3", "--output", path, "--print-sample", "3"},
                 absl::Seconds(60));
  ASSERT_TRUE(generated.ok()) << generated.status();
  ASSERT_EQ(generated->exit_code, 0) << generated->err;
  const std::vector<std::string> samples =
      absl::StrSplit(generated->err, '\n', absl::SkipWhitespace());
  ASSERT_EQ(samples.size(), 3u);

  auto server = ServerProcess::Start({"--handler", "whois", "--listen", "127.0.0.1:0", "--workers",
                                      "1", "--whois-db", path, "--whois-max-query-bytes", "100"});
  ASSERT_TRUE(server.ok()) << server.status();
  for (const std::string& name : samples) {
    const CommandResult out =
        RunOk({"whois", "-h", "127.0.0.1", "-p", std::to_string((*server)->port()), name});
    EXPECT_TRUE(absl::StrContains(out.out, "Domain Name: " + absl::AsciiStrToUpper(name)))
        << out.out;
  }
  // The embedded database is not served when a file is given.
  EXPECT_TRUE(absl::StartsWith(Exchange((*server)->port(), "example.com\r\n"), "No match"));
  ExpectOneErrorLine(Exchange((*server)->port(), std::string(101, 'a') + "\r\n"),
                     "Error: query too long.");
  EXPECT_TRUE(absl::StrContains((*server)->ReadStderr(), "whois: loaded 2000 domains"));
  EXPECT_EQ((*server)->Stop(), 0);
  unlink(path.c_str());
}

// The Debian whois client against the per-client limit: loopback is exempt by default, so
// the test removes the exemption. A burst of 3, then the registry-style refusal, counted.
TEST(WhoisRateLimitTest, ClientOverItsRateGetsTheRefusal) {
  auto server = ServerProcess::Start(
      {"--handler", "whois", "--listen", "127.0.0.1:0", "--workers", "1", "--whois-rate-limit-qps",
       "0.5", "--whois-rate-limit-burst", "3", "--whois-rate-limit-exempt="});
  ASSERT_TRUE(server.ok()) << server.status();
  int answered = 0;
  int refused = 0;
  for (int i = 0; i < 5; ++i) {
    const CommandResult result =
        RunOk({"whois", "-h", "127.0.0.1", "-p", std::to_string((*server)->port()), "example.com"});
    if (absl::StrContains(result.out, "   Domain Name: EXAMPLE.COM")) ++answered;
    if (absl::StrContains(result.out, "Error: query rate limit exceeded for your address.")) {
      ++refused;
    }
  }
  EXPECT_EQ(answered, 3);
  EXPECT_EQ(refused, 2);
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string out = (*server)->ReadStdout();
  EXPECT_TRUE(absl::StrContains(out, "whois_replies{result=\"rate_limited\"}=2")) << out;
}

// With the defaults, loopback is exempt: local monitoring and benchmarks are not limited.
TEST_F(WhoisEndToEndTest, LoopbackIsExemptByDefault) {
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(absl::StrContains(Whois({"example.net"}), "   Domain Name: EXAMPLE.NET")) << i;
  }
}

// The registry's layout for a name server with IPv6 glue, through the whois client.
TEST_F(WhoisEndToEndTest, NameserverWithIpv6GlueAndSignedDomain) {
  const std::string ns = Whois({"nameserver a.iana-servers.net"});
  EXPECT_TRUE(absl::StrContains(ns, "   IP Address: 2001:500:8F:0:0:0:0:53")) << ns;
  const std::string com = Whois({"example.com"});
  EXPECT_TRUE(absl::StrContains(com, "   DNSSEC: signedDelegation\n   DNSSEC DS Data: 370 13 2 ") ||
              absl::StrContains(com, "   DNSSEC: signedDelegation\r\n   DNSSEC DS Data: 370 13 2 "))
      << com;
}

TEST(WhoisDatabaseFlagsTest, BadDatabaseFailsStartupWithFileAndLine) {
  const std::string path = TempPath("bad.db");
  {
    std::ofstream out(path);
    out << "meta\tlast-update\t2026-01-01T00:00:00Z\n"
        << "registrar\t1\tR\tw\tu\tae\tap\ta\tp\te\n"
        << "domain\tbad_name.test\tID\t1\t2020-01-01T00:00:00Z\t2020-01-01T00:00:00Z\t"
           "2030-01-01T00:00:00Z\tok\t\tunsigned\n";
  }
  auto server =
      ServerProcess::Start({"--handler", "whois", "--listen", "127.0.0.1:0", "--whois-db", path});
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(), path + ":3: domain name"))
      << server.status();
  unlink(path.c_str());

  server = ServerProcess::Start(
      {"--handler", "whois", "--listen", "127.0.0.1:0", "--whois-db", "/nonexistent/whois.db"});
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(), "/nonexistent/whois.db"));

  server = ServerProcess::Start(
      {"--handler", "whois", "--listen", "127.0.0.1:0", "--whois-max-query-bytes", "3"});
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(), "--whois-max-query-bytes"));
}

}  // namespace
}  // namespace onepass::whois
