// End-to-end: the real onepassd with --handler ocsp, asked by the real clients (`openssl ocsp`,
// `curl`, `nc`) about certificates of a CA made by scripts/make-ocsp-testdata.sh.
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "handlers/ocsp/ocsp_flags.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace onepass::ocsp {
namespace {

using ::onepass::testing::CommandResult;
using ::onepass::testing::RunCommand;
using ::onepass::testing::ServerProcess;
using ::onepass::testing::StatValue;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs a command that must finish (not time out); its result otherwise.
CommandResult RunOk(const std::vector<std::string>& argv, const std::string& input = "") {
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(20), input);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return {};
  EXPECT_FALSE(result->timed_out) << argv[0];
  return *result;
}

// `openssl ocsp` POSTs a request (with a nonce, as it does by default) for `cert` and checks the
// signature against the CA; data_dir is a make-ocsp-testdata.sh output directory.
CommandResult OpensslPost(const std::string& data_dir, const std::string& cert, int port) {
  return RunOk({"openssl", "ocsp", "-issuer", data_dir + "/ca.pem", "-cert", data_dir + "/" + cert,
                "-url", absl::StrCat("http://127.0.0.1:", port), "-CAfile", data_dir + "/ca.pem",
                "-timeout", "10"});
}

class OcspEndToEndTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    for (const char* program : {"openssl", "curl", "nc"}) {
      ASSERT_TRUE(::onepass::testing::ProgramExists(program)) << program << " is not installed";
    }
    std::string pattern = ::testing::TempDir() + "/ocsp_e2e.XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = new std::string(pattern);
    const CommandResult made =
        RunOk({ONEPASS_SOURCE_DIR "/scripts/make-ocsp-testdata.sh", *dir_ + "/data"});
    ASSERT_EQ(made.exit_code, 0) << made.err;
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::Start({"--handler", "ocsp", "--listen", "127.0.0.1:0", "--workers", "2",
                              "--ocsp-responses", *dir_ + "/data/responses"});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }

  static void TearDownTestSuite() {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(), 0) << server_->ReadStderr();
      delete server_;
      server_ = nullptr;
    }
    if (dir_ != nullptr) {
      RunOk({"rm", "-rf", *dir_});
      delete dir_;
      dir_ = nullptr;
    }
  }

  void SetUp() override { ASSERT_NE(server_, nullptr) << "the server did not start"; }

  static std::string Data(absl::string_view file) { return absl::StrCat(*dir_, "/data/", file); }
  static std::string Url(absl::string_view path = "/") {
    return absl::StrCat("http://127.0.0.1:", server_->port(), path);
  }

  // The GET form (RFC 6960 Appendix A.1): curl fetches the response into a file, then
  // `openssl ocsp -respin` checks it.
  CommandResult CurlGetAndVerify(const std::string& cert, bool percent_encode) {
    const std::string request = ReadFile(Data(absl::StrCat(cert, ".req.der")));
    std::string path = absl::Base64Escape(request);
    if (percent_encode) {
      path = absl::StrReplaceAll(path, {{"/", "%2F"}, {"+", "%2B"}, {"=", "%3D"}});
    }
    const std::string out = absl::StrCat(*dir_, "/", cert, percent_encode ? ".pct" : "", ".der");
    const CommandResult curl = RunOk(
        {"curl", "-sS", "--max-time", "10", "-o", out, "-w", "%{http_code}", Url("/" + path)});
    EXPECT_EQ(curl.exit_code, 0) << curl.err;
    EXPECT_EQ(curl.out, "200");
    return RunOk({"openssl", "ocsp", "-respin", out, "-issuer", Data("ca.pem"), "-cert",
                  Data(cert + ".pem"), "-CAfile", Data("ca.pem")});
  }

  // Status code curl sees for `args` against the server.
  std::string CurlStatus(std::vector<std::string> args, absl::string_view path = "/") {
    std::vector<std::string> argv = {"curl", "-sS",       "--max-time", "10",
                                     "-o",   "/dev/null", "-w",         "%{http_code}"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(Url(path));
    const CommandResult result = RunOk(argv);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  }

  // Raw bytes through nc (for requests curl refuses to send); the response's status line.
  std::string RawStatusLine(const std::string& request) {
    const CommandResult result =
        RunOk({"nc", "-N", "-w", "10", "127.0.0.1", absl::StrCat(server_->port())}, request);
    return result.out.substr(0, result.out.find("\r\n"));
  }

  static std::string* dir_;
  static ServerProcess* server_;
};

std::string* OcspEndToEndTest::dir_ = nullptr;
ServerProcess* OcspEndToEndTest::server_ = nullptr;

TEST_F(OcspEndToEndTest, OpensslPostGoodRevokedUnknown) {
  CommandResult result = OpensslPost(*dir_ + "/data", "good.pem", server_->port());
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "good.pem: good")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.err, "Response verify OK")) << result.err;

  result = OpensslPost(*dir_ + "/data", "revoked.pem", server_->port());
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "revoked.pem: revoked")) << result.out;
  EXPECT_TRUE(absl::StrContains(result.out, "Reason: keyCompromise")) << result.out;

  result = OpensslPost(*dir_ + "/data", "unknown.pem", server_->port());
  EXPECT_TRUE(absl::StrContains(result.out + result.err, "Responder Error: unauthorized (6)"))
      << result.out << result.err;
}

// What handlers/ocsp/README.md says about nonces: a pre-signed response carries none, openssl
// warns and still verifies; with -no_nonce it does not warn.
TEST_F(OcspEndToEndTest, OpensslNonceWarningAndNoNonce) {
  CommandResult result = OpensslPost(*dir_ + "/data", "good.pem", server_->port());
  EXPECT_TRUE(absl::StrContains(result.out + result.err, "WARNING: no nonce in response"))
      << result.out << result.err;
  result = RunOk({"openssl", "ocsp", "-issuer", Data("ca.pem"), "-cert", Data("good.pem"), "-url",
                  Url(), "-CAfile", Data("ca.pem"), "-timeout", "10", "-no_nonce"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out, "good.pem: good")) << result.out;
  EXPECT_FALSE(absl::StrContains(result.out + result.err, "nonce")) << result.out << result.err;
}

TEST_F(OcspEndToEndTest, CurlGetBothEncodings) {
  for (bool percent_encode : {false, true}) {
    SCOPED_TRACE(percent_encode ? "percent-encoded" : "raw base64");
    CommandResult result = CurlGetAndVerify("good", percent_encode);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_TRUE(absl::StrContains(result.out, "good.pem: good")) << result.out << result.err;
    EXPECT_TRUE(absl::StrContains(result.err, "Response verify OK")) << result.err;
    result = CurlGetAndVerify("revoked", percent_encode);
    EXPECT_TRUE(absl::StrContains(result.out, "revoked.pem: revoked")) << result.out;
  }
  // Unknown certificate by GET: the unsigned `unauthorized` response, still a 200.
  CommandResult result = CurlGetAndVerify("unknown", true);
  EXPECT_TRUE(absl::StrContains(result.out + result.err, "unauthorized (6)"))
      << result.out << result.err;
}

TEST_F(OcspEndToEndTest, CachingHeaders) {
  const CommandResult result = RunOk({"curl", "-sS", "--max-time", "10", "-D", "-", "-o",
                                      "/dev/null", "-H", "Content-Type: application/ocsp-request",
                                      "--data-binary", "@" + Data("good.req.der"), Url()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& head = result.out;
  EXPECT_TRUE(absl::StartsWith(head, "HTTP/1.1 200 OK\r\n")) << head;
  for (absl::string_view field :
       {"\r\nContent-Type: application/ocsp-response\r\n", "\r\nConnection: close\r\n",
        "\r\nLast-Modified: ", "\r\nExpires: ", "\r\nETag: \"",
        "\r\nDate: ", ", public, no-transform, must-revalidate\r\n"}) {
    EXPECT_TRUE(absl::StrContains(head, field)) << field << " missing in " << head;
  }
  const std::string body_size = absl::StrCat(ReadFile(Data("responses/good.der")).size());
  EXPECT_TRUE(absl::StrContains(head, "\r\nContent-Length: " + body_size + "\r\n")) << head;
}

// What caches in front of a responder do (RFC 5019 §6.2): revalidate with the ETag or the
// Last-Modified they hold and get 304; probe with HEAD.
TEST_F(OcspEndToEndTest, CurlConditionalAndHead) {
  const std::string path =
      "/" + absl::StrReplaceAll(absl::Base64Escape(ReadFile(Data("good.req.der"))),
                                {{"/", "%2F"}, {"+", "%2B"}, {"=", "%3D"}});
  const CommandResult first =
      RunOk({"curl", "-sS", "--max-time", "10", "-D", "-", "-o", "/dev/null", Url(path)});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const size_t at = first.out.find("ETag: ");
  ASSERT_NE(at, std::string::npos) << first.out;
  const std::string etag = first.out.substr(at + 6, first.out.find("\r\n", at) - at - 6);
  const size_t lm = first.out.find("Last-Modified: ");
  ASSERT_NE(lm, std::string::npos) << first.out;
  const std::string last_modified = first.out.substr(lm + 15, first.out.find("\r\n", lm) - lm - 15);
  EXPECT_EQ(CurlStatus({"-H", "If-None-Match: " + etag}, path), "304");
  EXPECT_EQ(CurlStatus({"-H", "If-None-Match: \"stale\""}, path), "200");
  EXPECT_EQ(CurlStatus({"-H", "If-Modified-Since: " + last_modified}, path), "304");
  // curl -I sends HEAD: the 200's head, Content-Length included, and no content.
  const CommandResult head = RunOk({"curl", "-sS", "--max-time", "10", "-I", Url(path)});
  ASSERT_EQ(head.exit_code, 0) << head.err;
  EXPECT_TRUE(absl::StartsWith(head.out, "HTTP/1.1 200 OK\r\n")) << head.out;
  EXPECT_TRUE(absl::StrContains(head.out, "ETag: " + etag)) << head.out;
}

// RFC 9110 §10.1.1: curl sends Expect: 100-continue and waits (1 s by default) for the 100;
// with the interim response it sends the body at once. The 1-byte pad makes the POST body
// larger than curl's threshold for asking (1 MiB in curl 7.88 is for -d; -H forces it).
TEST_F(OcspEndToEndTest, CurlExpectContinueGetsTheInterimResponse) {
  const CommandResult result =
      RunOk({"curl", "-sS", "-v", "--max-time", "10", "--expect100-timeout", "5", "-o",
             absl::StrCat(*dir_, "/continue.der"), "-w", "%{http_code} %{time_total}", "-H",
             "Content-Type: application/ocsp-request", "-H", "Expect: 100-continue",
             "--data-binary", "@" + Data("good.req.der"), Url()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.err, "HTTP/1.1 100 Continue")) << result.err;
  EXPECT_TRUE(absl::StartsWith(result.out, "200 ")) << result.out;
  double seconds = 99;
  ASSERT_TRUE(absl::SimpleAtod(result.out.substr(4), &seconds)) << result.out;
  EXPECT_LT(seconds, 4.0) << "curl waited for its expect timeout";
  const CommandResult verified =
      RunOk({"openssl", "ocsp", "-respin", absl::StrCat(*dir_, "/continue.der"), "-issuer",
             Data("ca.pem"), "-cert", Data("good.pem"), "-CAfile", Data("ca.pem")});
  EXPECT_TRUE(absl::StrContains(verified.out, ": good")) << verified.out << verified.err;
}

// RFC 6960 §4.1.1: `openssl ocsp` sends one CertID per -cert. The test data has one response
// per certificate, so no single response holds both: unauthorized, not a response that leaves
// one out (openssl would report "No Status found" for it).
TEST_F(OcspEndToEndTest, OpensslSeveralCertIdsInSeparateResponsesAreUnauthorized) {
  const CommandResult result =
      RunOk({"openssl", "ocsp", "-issuer", Data("ca.pem"), "-cert", Data("good.pem"), "-cert",
             Data("revoked.pem"), "-url", Url(), "-CAfile", Data("ca.pem"), "-timeout", "10"});
  EXPECT_TRUE(absl::StrContains(result.out + result.err, "unauthorized"))
      << result.out << result.err;
  EXPECT_FALSE(absl::StrContains(result.out + result.err, "No Status found"))
      << result.out << result.err;
}

TEST_F(OcspEndToEndTest, NotOcspRequestsGetTheirStatus) {
  const std::string der = "@" + Data("good.req.der");
  const std::string ocsp_type = "Content-Type: application/ocsp-request";
  EXPECT_EQ(CurlStatus({"-X", "PUT"}), "405");
  EXPECT_EQ(CurlStatus({"-H", ocsp_type, "--data-binary", der}, "/somewhere/else"), "404");
  EXPECT_EQ(CurlStatus({}, "/not*base64"), "400");
  EXPECT_EQ(CurlStatus({"-H", "Content-Type: text/plain", "--data-binary", der}), "415");
  const std::string big = absl::StrCat(*dir_, "/big.bin");
  std::ofstream(big, std::ios::binary) << std::string(20000, 'x');
  EXPECT_EQ(CurlStatus({"-H", ocsp_type, "--data-binary", "@" + big}), "413");
  EXPECT_EQ(CurlStatus({"-H", "X-Big: " + std::string(9000, 'a')}), "431");
  EXPECT_EQ(CurlStatus({}, "/" + std::string(9000, 'A')), "414");
  EXPECT_EQ(CurlStatus({"-H", ocsp_type, "-H", "Transfer-Encoding: chunked", "--data-binary", der}),
            "501");
  // Malformed DER is still a 200 carrying malformedRequest (RFC 6960 §4.2.1).
  EXPECT_EQ(CurlStatus({"-H", ocsp_type, "--data-binary", "not DER"}), "200");
}

TEST_F(OcspEndToEndTest, SmugglingShapesAreRejected) {
  EXPECT_EQ(RawStatusLine("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
                          "Content-Length: 1\r\n\r\nx"),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(RawStatusLine("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(RawStatusLine("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n folded\r\n\r\n"),
            "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(RawStatusLine("GET / HTTP/1.1\r\nHost : h\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(RawStatusLine("GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  // A Content-Length over --ocsp-max-body-bytes is refused before any body arrives.
  EXPECT_EQ(RawStatusLine("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999\r\n\r\n"),
            "HTTP/1.1 413 Content Too Large");
  // The peer half-closes mid-request: 400, not a hang.
  EXPECT_EQ(RawStatusLine("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc"),
            "HTTP/1.1 400 Bad Request");
  // HTTP/1.0 (what `openssl ocsp` sends) without Host is fine.
  const std::string der = ReadFile(Data("good.req.der"));
  EXPECT_EQ(RawStatusLine(absl::StrCat("POST / HTTP/1.0\r\nContent-Type: application/ocsp-request"
                                       "\r\nContent-Length: ",
                                       der.size(), "\r\n\r\n", der)),
            "HTTP/1.1 200 OK");
}

TEST_F(OcspEndToEndTest, FlagsForPathAndLimits) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"--handler", "ocsp", "--listen", "127.0.0.1:0", "--workers", "1", "--ocsp-responses",
       Data("responses"), "--ocsp-path", "/ocsp", "--ocsp-max-body-bytes", "200"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string base = absl::StrCat("http://127.0.0.1:", (*server)->port());
  CommandResult result =
      RunOk({"openssl", "ocsp", "-issuer", Data("ca.pem"), "-cert", Data("good.pem"), "-url",
             base + "/ocsp", "-CAfile", Data("ca.pem"), "-timeout", "10"});
  EXPECT_TRUE(absl::StrContains(result.out, "good.pem: good")) << result.out << result.err;
  const std::vector<std::string> post = {
      "curl",      "-sS", "--max-time",   "10", "-o",
      "/dev/null", "-w",  "%{http_code}", "-H", "Content-Type: application/ocsp-request"};
  auto status = [&](const std::string& body_file, const std::string& url) {
    std::vector<std::string> argv = post;
    argv.insert(argv.end(), {"--data-binary", "@" + body_file, url});
    return RunOk(argv).out;
  };
  EXPECT_EQ(status(Data("good.req.der"), base + "/ocsp"), "200");
  EXPECT_EQ(status(Data("good.req.der"), base + "/"), "404");
  const std::string body = absl::StrCat(*dir_, "/201.bin");
  std::ofstream(body, std::ios::binary) << std::string(201, 'x');
  EXPECT_EQ(status(body, base + "/ocsp"), "413");
  EXPECT_EQ((*server)->Stop(), 0);
}

TEST_F(OcspEndToEndTest, BadFlagsStopStartup) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--ocsp-responses", *dir_ + "/no/such/dir"},
        std::vector<std::string>{"--ocsp-responses", *dir_ + "/data"},  // no responses in it
        std::vector<std::string>{"--ocsp-path", "ocsp"},
        std::vector<std::string>{"--ocsp-max-header-bytes", "10"}}) {
    std::vector<std::string> args = {"--handler", "ocsp", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), flags.begin(), flags.end());
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(args);
    EXPECT_FALSE(server.ok()) << flags[0] << " " << flags[1];
    if (!server.ok()) {
      EXPECT_TRUE(absl::StrContains(server.status().message(), "ocsp")) << server.status();
    }
  }
}

// Without --ocsp-responses an installed onepassd reads /etc/onepass/ocsp; where that is missing
// it refuses to start and says what to pass.
TEST(OcspDefaultDataTest, MissingDefaultDirectorySaysWhatToPass) {
  struct stat info;
  if (stat(std::string(kDefaultOcspResponsesDir).c_str(), &info) == 0) {
    GTEST_SKIP() << kDefaultOcspResponsesDir << " exists on this machine";
  }
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "ocsp", "--listen", "127.0.0.1:0", "--workers", "1"});
  ASSERT_FALSE(server.ok());
  EXPECT_TRUE(absl::StrContains(server.status().message(), "/etc/onepass/ocsp")) << server.status();
  EXPECT_TRUE(absl::StrContains(server.status().message(), "pass --ocsp-responses DIR"))
      << server.status();
}

// The exit stats line carries the handler's counters, by response status and HTTP error.
TEST_F(OcspEndToEndTest, StatsLineCountsAnswersByStatus) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "ocsp", "--listen", "127.0.0.1:0", "--workers", "2",
                            "--ocsp-responses", Data("responses")});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  EXPECT_EQ(OpensslPost(*dir_ + "/data", "good.pem", port).exit_code, 0);
  EXPECT_EQ(OpensslPost(*dir_ + "/data", "revoked.pem", port).exit_code, 0);
  const CommandResult not_found =
      RunOk({"curl", "-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}",
             "--data-binary", "x", absl::StrCat("http://127.0.0.1:", port, "/x")});
  EXPECT_EQ(not_found.out, "404");
  ASSERT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
  const std::string stats = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(stats, "ocsp_responses{status=\"successful\"}"), 2) << stats;
  EXPECT_EQ(StatValue(stats, "ocsp_http_errors{status=\"404\"}"), 1) << stats;
  EXPECT_EQ(StatValue(stats, "ocsp_responses{status=\"malformedRequest\"}"), 0) << stats;
}

}  // namespace
}  // namespace onepass::ocsp
