// End-to-end: the real onepassd with --handler rdap, asked by curl, by rdapper (a real RDAP
// client from npm, pinned in scripts/install-deps.sh) and by a raw socket for hostile
// requests. Every kind of answer goes through scripts/rdap-check.py, a checker that shares no
// code with the server; a Whois server on the same generated database must give the same
// facts as RDAP for a sample of its domains (rdap-check.py diff).
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::rdap {
namespace {

using ::onepass::testing::CommandResult;
using ::onepass::testing::RunCommand;
using ::onepass::testing::ServerProcess;
using ::onepass::testing::TcpClient;

const std::string kChecker = std::string(ONEPASS_SOURCE_DIR) + "/scripts/rdap-check.py";

CommandResult RunOk(const std::vector<std::string>& argv, const std::string& input = "") {
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(60), input);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  EXPECT_FALSE(result->timed_out) << argv[0];
  return *result;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Exchange(int port, absl::string_view bytes) {
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port);
  EXPECT_TRUE(client.ok()) << client.status();
  if (!client.ok()) return "<no connection>";
  EXPECT_TRUE(client->Send(bytes).ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose(absl::Seconds(10));
  EXPECT_TRUE(reply.ok()) << reply.status();
  return reply.ok() ? *reply : "<no close>";
}

class RdapEndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(::onepass::testing::ProgramExists("curl")) << "install curl";
    ASSERT_TRUE(::onepass::testing::ProgramExists("node")) << "run scripts/install-deps.sh";
    // The base URL's path is served too (/rdap/domain/...); links name it without the port,
    // which port 0 does not know yet: no client here follows them.
    pki_ = new ::onepass::tls::testing::TestPkiDir({.common_name = "rdap.example.test"});
    // HTTPS beside HTTP (RFC 7481), ALPN http/1.1 by --handler's default.
    auto server = ServerProcess::Start({"--handler", "rdap", "--listen", "127.0.0.1:0", "--workers",
                                        "2", "--rdap-base-url", "http://127.0.0.1/rdap/",
                                        "--tls-listen", "127.0.0.1:0", "--tls-cert",
                                        pki_->chain_file(), "--tls-key", pki_->key_file()});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(), 0) << server_->ReadStderr();
    }
    delete server_;
    server_ = nullptr;
    delete pki_;
    pki_ = nullptr;
  }
  static std::string Url(absl::string_view path) {
    return absl::StrCat("http://127.0.0.1:", server_->port(), path);
  }

  struct Fetched {
    std::string code;
    std::string head;
    std::string body;
  };
  Fetched Curl(absl::string_view path, const std::vector<std::string>& extra = {}) {
    const std::string base = ::testing::TempDir() + "/rdap_e2e_" + std::to_string(getpid());
    std::vector<std::string> argv = {"curl",         "-sS", "--path-as-is", "--max-time",
                                     "10",           "-o",  base + ".body", "-D",
                                     base + ".head", "-w",  "%{http_code}"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(Url(path));
    const CommandResult result = RunOk(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    Fetched fetched{result.out, ReadFile(base + ".head"), ReadFile(base + ".body")};
    std::remove((base + ".body").c_str());
    std::remove((base + ".head").c_str());
    return fetched;
  }
  void Check(absl::string_view kind, const std::string& body, int status,
             bool lenient_abuse = false) {
    std::vector<std::string> argv = {"python3",         kChecker,   "check",
                                     std::string(kind), "--status", std::to_string(status)};
    if (lenient_abuse) argv.push_back("--lenient-abuse");
    const CommandResult result = RunOk(argv, body);
    EXPECT_EQ(result.exit_code, 0) << kind << ": " << result.out << result.err;
  }

  static ServerProcess* server_;
  static ::onepass::tls::testing::TestPkiDir* pki_;
};

ServerProcess* RdapEndToEndTest::server_ = nullptr;
::onepass::tls::testing::TestPkiDir* RdapEndToEndTest::pki_ = nullptr;

TEST_F(RdapEndToEndTest, HttpsAnswersAsHttpWithAVerifiedChain) {
  const Fetched plain = Curl("/domain/example.org");
  const std::string base = ::testing::TempDir() + "/rdap_https_" + std::to_string(getpid());
  // curl offers h2 and http/1.1; the server selects http/1.1 (-w shows the version used).
  const CommandResult result = RunOk(
      {"curl", "-sS", "--max-time", "10", "--cacert", pki_->ca_file(), "--resolve",
       absl::StrCat("rdap.example.test:", server_->tls_port(), ":127.0.0.1"), "-o", base + ".body",
       "-w", "%{http_code} %{http_version}",
       absl::StrCat("https://rdap.example.test:", server_->tls_port(), "/domain/example.org")});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "200 1.1");
  EXPECT_EQ(ReadFile(base + ".body"), plain.body);
  std::remove((base + ".body").c_str());
}

TEST_F(RdapEndToEndTest, EveryAnswerKindPassesTheIndependentChecker) {
  struct Case {
    const char* kind;
    const char* path;
    int status;
    bool lenient_abuse;  // registrar 376 (IANA) has no abuse contact in the data
  };
  const Case cases[] = {
      {"domain", "/rdap/domain/example.org", 200, false},
      {"domain", "/domain/EXAMPLE.COM", 200, true},
      {"domain", "/domain/b%C3%BCcher.example", 200, false},
      {"domain", "/domain/onepass.test.", 200, false},
      {"nameserver", "/nameserver/ns1.registrar.example", 200, false},
      {"nameserver", "/nameserver/a.iana-servers.net", 200, true},
      {"entity", "/entity/9999", 200, false},
      {"entity", "/entity/exr-1003", 200, false},
      {"help", "/help", 200, false},
      {"search", "/domains?name=exa*", 200, true},
      {"search", "/domains?name=nothing-like-it*", 200, false},
      {"error", "/domain/nosuch.example", 404, false},
      {"error", "/domain/../../etc/passwd", 400, false},
      {"error", "/domains?name=*", 422, false},
      {"error", "/domains?nsIp=192.0.2.1", 501, false},
      // Number resources: 501 as README says, whatever the arguments (they used to be 400).
      {"error", "/ip/192.0.2.1", 501, false},
      {"error", "/ip/2001:db8::/32", 501, false},
      {"error", "/rdap/autnum/64496", 501, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const Fetched f = Curl(c.path);
    EXPECT_EQ(f.code, std::to_string(c.status));
    EXPECT_TRUE(absl::StrContains(f.head, "Content-Type: application/rdap+json\r\n")) << f.head;
    EXPECT_TRUE(absl::StrContains(f.head, "Access-Control-Allow-Origin: *\r\n")) << f.head;
    Check(c.kind, f.body, c.status, c.lenient_abuse);
  }
}

// A browser's CORS preflight as curl sends it, over HTTP and HTTPS: 204, every origin allowed
// (RFC 7480 §5.6), the methods, the If-None-Match a revalidating client adds, a max age.
TEST_F(RdapEndToEndTest, CorsPreflightGets204OverHttpAndHttps) {
  const std::vector<std::string> preflight = {
      "-X", "OPTIONS",
      "-H", "Origin: https://client.example",
      "-H", "Access-Control-Request-Method: GET",
      "-H", "Access-Control-Request-Headers: if-none-match"};
  auto expect_cors = [](const std::string& code, const std::string& head) {
    EXPECT_EQ(code, "204") << head;
    EXPECT_TRUE(absl::StartsWith(head, "HTTP/1.1 204 No Content\r\n")) << head;
    for (const char* field :
         {"Access-Control-Allow-Origin: *\r\n",
          "Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n",
          "Access-Control-Allow-Headers: Accept, If-None-Match\r\n",
          "Access-Control-Max-Age: 86400\r\n", "Allow: GET, HEAD, OPTIONS\r\n"}) {
      EXPECT_TRUE(absl::StrContains(head, field)) << field << head;
    }
    EXPECT_FALSE(absl::StrContains(head, "Content-Length")) << head;
  };
  for (const char* path : {"/domain/example.org", "/rdap/help", "/domain/nosuch.example"}) {
    SCOPED_TRACE(path);
    const Fetched f = Curl(path, preflight);
    expect_cors(f.code, f.head);
    EXPECT_TRUE(f.body.empty());
  }
  const std::string base = ::testing::TempDir() + "/rdap_cors_" + std::to_string(getpid());
  std::vector<std::string> argv = {
      "curl",       "-sS",
      "--max-time", "10",
      "--cacert",   pki_->ca_file(),
      "--resolve",  absl::StrCat("rdap.example.test:", server_->tls_port(), ":127.0.0.1"),
      "-o",         base + ".body",
      "-D",         base + ".head",
      "-w",         "%{http_code}"};
  argv.insert(argv.end(), preflight.begin(), preflight.end());
  argv.push_back(
      absl::StrCat("https://rdap.example.test:", server_->tls_port(), "/domain/example.org"));
  const CommandResult result = RunOk(argv);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  expect_cors(result.out, ReadFile(base + ".head"));
  std::remove((base + ".body").c_str());
  std::remove((base + ".head").c_str());
}

TEST_F(RdapEndToEndTest, HeadEtagAnd304WithCurl) {
  const Fetched get = Curl("/domain/example.org");
  const size_t at = get.head.find("ETag: ");
  ASSERT_NE(at, std::string::npos) << get.head;
  const std::string etag = get.head.substr(at + 6, get.head.find("\r\n", at) - at - 6);
  const Fetched head = Curl("/domain/example.org", {"-I"});
  EXPECT_EQ(head.code, "200");
  EXPECT_TRUE(absl::StrContains(head.head, absl::StrCat("ETag: ", etag)));
  EXPECT_TRUE(absl::StrContains(head.head, absl::StrCat("Content-Length: ", get.body.size())));
  const Fetched cached = Curl("/domain/example.org", {"-H", "If-None-Match: " + etag});
  EXPECT_EQ(cached.code, "304");
  EXPECT_TRUE(cached.body.empty());
  const Fetched changed = Curl("/domain/example.org", {"-H", "If-None-Match: \"0\""});
  EXPECT_EQ(changed.code, "200");
}

TEST_F(RdapEndToEndTest, RdapperReadsDomains) {
  const std::string script =
      std::string(ONEPASS_SOURCE_DIR) + "/tests/integration/rdap/rdapper_lookup.mjs";
  const CommandResult root = RunOk({"npm", "root", "-g"});
  const std::string node_path(absl::StripTrailingAsciiWhitespace(root.out));
  auto lookup = [&](const std::string& domain) {
    return RunOk({"env", "NODE_PATH=" + node_path, "node", script, Url("/rdap/"), domain});
  };
  const CommandResult com = lookup("example.com");
  ASSERT_EQ(com.exit_code, 0) << com.out << com.err;
  EXPECT_TRUE(absl::StrContains(com.out, "\"registered\":true")) << com.out;
  EXPECT_TRUE(absl::StrContains(com.out, "\"ianaId\":\"376\"")) << com.out;
  EXPECT_TRUE(
      absl::StrContains(com.out, "\"nameservers\":[\"a.iana-servers.net\",\"b.iana-servers.net\"]"))
      << com.out;
  EXPECT_TRUE(absl::StrContains(com.out, "\"dnssec\":true,\"ds\":2")) << com.out;
  const CommandResult org = lookup("example.org");
  ASSERT_EQ(org.exit_code, 0) << org.out << org.err;
  EXPECT_TRUE(absl::StrContains(org.out, "\"registrar\":\"Example Registrar, Inc.\"")) << org.out;
  EXPECT_TRUE(absl::StrContains(org.out, "\"created\":\"1995-08-31T04:00:00Z\"")) << org.out;
  const CommandResult none = lookup("nosuch.example");
  EXPECT_TRUE(absl::StrContains(none.out, "\"registered\":false")) << none.out << none.err;
}

TEST_F(RdapEndToEndTest, HostileRequestsGetErrorsNeverACrash) {
  const std::string long_label(64, 'a');
  const std::string huge_query = "/domains?name=" + std::string(8000, 'a') + "*";
  struct Case {
    std::string target;
    const char* status;
  };
  const std::vector<Case> cases = {
      {"/domain/../../../etc/passwd", "400"},
      {"/domain/%2e%2e%2f%2e%2e%2fetc%2fpasswd", "400"},
      {"/domain/%252e%252e", "400"},  // decoded once: "%2e%2e" is no name
      {"/domain/example.com%00.evil", "400"},
      {"/domain/" + long_label + ".example", "400"},
      {"/domain/xn--.example", "400"},
      {"/domain/xn--a.example", "404"},         // an A-label libidn2 accepts; no such domain
      {"/domain/%F0%9F%92%A9.example", "400"},  // an emoji: IDNA2008 refuses it
      {"/domain/%C0%AE.example", "400"},        // an overlong UTF-8 dot
      {"/domains?name=a*", "422"},
      {"/domains?name=*.com", "422"},
      {"/domains?name=%2A%2A%2A%2A%2A", "422"},
      {"/domains?name=e*x*a*m*p*l*e*", "422"},
      {huge_query, "414"},
      {"/domain/example.com?x=" + std::string(3000, 'x'), "200"},  // query ignored on lookups
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.target.substr(0, 80));
    const std::string reply =
        Exchange(server_->port(), absl::StrCat("GET ", c.target, " HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_TRUE(absl::StartsWith(reply, absl::StrCat("HTTP/1.1 ", c.status, " ")))
        << reply.substr(0, 200);
  }
  // Raw bytes no client sends: NUL and a bare LF in the head, and a body on a GET.
  EXPECT_TRUE(absl::StartsWith(
      Exchange(server_->port(), std::string("GET /help\0 HTTP/1.1\r\n", 21)), "HTTP/1.1 400 "));
  EXPECT_TRUE(absl::StartsWith(Exchange(server_->port(), "GET /help HTTP/1.1\nHost: x\n\n"),
                               "HTTP/1.1 400 "));
  EXPECT_TRUE(absl::StartsWith(
      Exchange(server_->port(), "GET /help HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
      "HTTP/1.1 413 "));
  // Still serving.
  EXPECT_EQ(Curl("/help").code, "200");
}

// Whois and RDAP over the same generated database give the same facts for its domains.
TEST(RdapWhoisDifferentialTest, SameFactsOverAGeneratedDatabase) {
  const std::string db = ::testing::TempDir() + "/rdap_diff_" + std::to_string(getpid()) + ".db";
  const CommandResult generated =
      RunOk({"python3", std::string(ONEPASS_SOURCE_DIR) + "/scripts/gen-whois-db.py", "--domains",
             "20000", "--seed", "3", "--output", db});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  auto whois =
      ServerProcess::Start({"--handler", "whois", "--listen", "127.0.0.1:0", "--whois-db", db});
  ASSERT_TRUE(whois.ok()) << whois.status();
  auto rdap =
      ServerProcess::Start({"--handler", "rdap", "--listen", "127.0.0.1:0", "--whois-db", db});
  ASSERT_TRUE(rdap.ok()) << rdap.status();
  const CommandResult diff =
      RunOk({"python3", kChecker, "diff", "--whois", absl::StrCat("127.0.0.1:", (*whois)->port()),
             "--rdap", absl::StrCat("http://127.0.0.1:", (*rdap)->port(), "/"), "--db", db,
             "--sample", "300"});
  EXPECT_EQ(diff.exit_code, 0) << diff.out << diff.err;
  EXPECT_TRUE(absl::StrContains(diff.out, "diff: 300 domains, 0 differences")) << diff.out;
  // The same sample's answers pass the checker (generated registrars have abuse contacts).
  const CommandResult check =
      RunOk({"bash", "-c",
             absl::StrCat("set -e; for d in $(grep -P '^domain\\t' ", db,
                          " | awk 'NR % 997 == 1 {print $2}'); do curl -sS --max-time 10 "
                          "http://127.0.0.1:",
                          (*rdap)->port(), "/domain/$d | python3 ", kChecker,
                          " check domain || { echo \"$d\"; exit 1; }; done")});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ((*whois)->Stop(), 0);
  EXPECT_EQ((*rdap)->Stop(), 0);
  std::remove(db.c_str());
}

}  // namespace
}  // namespace onepass::rdap
