// onepass-load against the real onepassd (--handler dns, embedded default zone): every
// answer passes the tester's own checks, and the tester's count of completed transactions
// agrees exactly with the server's own "served" count from its exit stats line.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace onepass::load::testing {
namespace {

using onepass::testing::CommandResult;
using onepass::testing::RunCommand;
using onepass::testing::ServerProcess;

long long Field(const std::string& text, const std::string& pattern) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(pattern))) return -1;
  return std::stoll(match[1]);
}

TEST(OnepassdAgreementTest, TesterAndServerCountTheSameTransactions) {
  auto server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1"});
  ASSERT_TRUE(server.ok()) << server.status();
  constexpr int kCount = 500;
  absl::StatusOr<CommandResult> load =
      RunCommand({ONEPASS_LOAD_PATH, "--target", (*server)->addresses()[0], "--proto", "dns",
                  "--qname", "www.example.com.", "--qtype", "A", "--count", absl::StrCat(kCount),
                  "--concurrency", "8", "--threads", "2", "--timeout-ms", "5000"},
                 absl::Seconds(60));
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_EQ(load->exit_code, 0) << load->out << load->err;
  EXPECT_NE(load->out.find(absl::StrCat(kCount, " started, ", kCount, " ok, 0 errors")),
            std::string::npos)
      << load->out;
  ASSERT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
  std::string stats = (*server)->ReadStdout();
  EXPECT_EQ(Field(stats, "stats accepted=([0-9]+)"), kCount) << stats;
  EXPECT_EQ(Field(stats, "served=([0-9]+)"), kCount) << stats;
}

TEST(OnepassdAgreementTest, NxdomainAndNodataAreJudgedAsAsked) {
  auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  std::string target = (*server)->addresses()[0];
  absl::StatusOr<CommandResult> nxdomain =
      RunCommand({ONEPASS_LOAD_PATH, "--target", target, "--qname", "nothere.example.com.",
                  "--expect-rcode", "NXDOMAIN", "--count", "50", "--concurrency", "4"},
                 absl::Seconds(60));
  ASSERT_TRUE(nxdomain.ok());
  EXPECT_EQ(nxdomain->exit_code, 0) << nxdomain->out << nxdomain->err;
  // Asking NOERROR of a name that does not exist: all 50 must be counted wrong.
  absl::StatusOr<CommandResult> wrong =
      RunCommand({ONEPASS_LOAD_PATH, "--target", target, "--qname", "nothere.example.com.",
                  "--count", "50", "--concurrency", "4"},
                 absl::Seconds(60));
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->exit_code, 3);
  EXPECT_NE(wrong->out.find("50 started, 0 ok, 50 errors"), std::string::npos) << wrong->out;
  EXPECT_NE(wrong->out.find("rcode NXDOMAIN, expected NOERROR"), std::string::npos) << wrong->out;
  // NODATA (www has no MX): wrong when answers are expected, fine when they are not.
  absl::StatusOr<CommandResult> nodata =
      RunCommand({ONEPASS_LOAD_PATH, "--target", target, "--qname", "www.example.com.", "--qtype",
                  "MX", "--count", "20", "--concurrency", "2"},
                 absl::Seconds(60));
  ASSERT_TRUE(nodata.ok());
  EXPECT_NE(nodata->out.find("20 started, 0 ok, 20 errors"), std::string::npos) << nodata->out;
  EXPECT_NE(nodata->out.find("no answer records"), std::string::npos) << nodata->out;
  absl::StatusOr<CommandResult> nodata_ok =
      RunCommand({ONEPASS_LOAD_PATH, "--target", target, "--qname", "www.example.com.", "--qtype",
                  "MX", "--expect-answers=false", "--count", "20", "--concurrency", "2"},
                 absl::Seconds(60));
  ASSERT_TRUE(nodata_ok.ok());
  EXPECT_EQ(nodata_ok->exit_code, 0) << nodata_ok->out << nodata_ok->err;
  (*server)->Stop();
}

// The same agreement for the other two protocols, on their default data. `counter`, when
// given, is the handler counter in the stats line that must count every transaction too.
void ExpectAgreement(const std::vector<std::string>& server_args,
                     const std::vector<std::string>& load_args, const std::string& counter = "") {
  auto server = ServerProcess::Start(server_args);
  ASSERT_TRUE(server.ok()) << server.status();
  constexpr int kCount = 300;
  std::vector<std::string> argv = {ONEPASS_LOAD_PATH,
                                   "--target",
                                   (*server)->addresses()[0],
                                   "--count",
                                   absl::StrCat(kCount),
                                   "--concurrency",
                                   "6",
                                   "--timeout-ms",
                                   "5000"};
  argv.insert(argv.end(), load_args.begin(), load_args.end());
  absl::StatusOr<CommandResult> load = RunCommand(argv, absl::Seconds(60));
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_EQ(load->exit_code, 0) << load->out << load->err;
  EXPECT_NE(load->out.find(absl::StrCat(kCount, " started, ", kCount, " ok, 0 errors")),
            std::string::npos)
      << load->out;
  ASSERT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
  std::string stats = (*server)->ReadStdout();
  EXPECT_EQ(Field(stats, "served=([0-9]+)"), kCount) << stats;
  if (!counter.empty()) {
    EXPECT_EQ(onepass::testing::StatValue(stats, counter), kCount) << stats;
  }
}

TEST(OnepassdAgreementTest, EdnsQueriesGetOneOptBack) {
  ExpectAgreement({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1"},
                  {"--proto", "dns", "--qname", "www.example.com.", "--qtype", "AAAA",
                   "--edns-size", "1232", "--dnssec-ok"});
}

TEST(OnepassdAgreementTest, QueryListIsCycled) {
  // Names of the default zone with answers of several kinds: apex, CNAME chain, wildcard, MX.
  std::string path = absl::StrCat(::testing::TempDir(), "/queries_", getpid(), ".txt");
  {
    std::ofstream file(path);
    file << "# name type\nexample.com. SOA\nalias.example.com. A\nfoo.wild.example.com. TXT\n"
            "example.com. MX\n";
  }
  ExpectAgreement({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1"},
                  {"--proto", "dns", "--queries", path});
  std::remove(path.c_str());
}

TEST(OnepassdAgreementTest, WhoisOnTheEmbeddedDatabase) {
  ExpectAgreement(
      {"--handler", "whois", "--listen", "127.0.0.1:0", "--workers", "1"},
      {"--proto", "whois", "--whois-query", "example.com", "--expect-substring", "EXAMPLE.COM"},
      "whois_replies{result=\"match\"}");
}

TEST(OnepassdAgreementTest, OcspOnATestDataSetByPostAndGet) {
  // A fresh data set (its responses expire after 7 days), made in a scratch folder.
  std::string dir = ::testing::TempDir() + "/ocsp_agreement.XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::string data = dir + "/data";
  absl::StatusOr<CommandResult> made =
      RunCommand({ONEPASS_SOURCE_DIR "/scripts/make-ocsp-testdata.sh", data}, absl::Seconds(60));
  ASSERT_TRUE(made.ok()) << made.status();
  ASSERT_EQ(made->exit_code, 0) << made->err;
  for (const char* method : {"--ocsp-get=false", "--ocsp-get=true"}) {
    SCOPED_TRACE(method);
    ExpectAgreement({"--handler", "ocsp", "--ocsp-responses", data + "/responses", "--listen",
                     "127.0.0.1:0", "--workers", "1"},
                    {"--proto", "ocsp", "--ocsp-request", data + "/good.req.der", method},
                    "ocsp_responses{status=\"successful\"}");
  }
  ASSERT_TRUE(RunCommand({"rm", "-rf", dir}, absl::Seconds(30)).ok());
}

}  // namespace
}  // namespace onepass::load::testing
