// Differential test: NSD and onepassd serve the same zone (tests/data/example.com.zone, which
// is also onepassd's embedded default); every query of differential_queries.txt goes to both
// over TCP and the answers must agree: RCODE (with extended bits), opcode, AA, TC, RD, the
// question, every section as a set of records with TTLs, and the OPT record. Only the order
// of records within a section is ignored (it carries no meaning, RFC 2181 §5).
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/differential_corpus.h"
#include "tests/integration/dns/nsd_process.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::Ask;
using testing::CorpusQuery;
using testing::DecodedResponse;
using testing::Differences;
using testing::ReadCorpus;

const std::string kSourceDir = ONEPASS_SOURCE_DIR;

// Deliberate differences, each justified; the test names the query that shows it.
const absl::flat_hash_map<std::string, std::string>& Exceptions() {
  static const auto* exceptions = new absl::flat_hash_map<std::string, std::string>{
      // (none yet: every query of the corpus must agree)
  };
  return *exceptions;
}

// Serves `zones` from both servers and compares every corpus query.
void CompareWithNsd(const std::vector<testing::NsdProcess::ZoneFile>& zones) {
  auto nsd = testing::NsdProcess::Start(zones);
  ASSERT_TRUE(nsd.ok()) << nsd.status();
  std::string zone_flag;
  for (const auto& zone : zones) zone_flag += (zone_flag.empty() ? "" : ",") + zone.path;
  // --keepalive-ms 0: onepassd echoes edns-tcp-keepalive (RFC 7828 §3.3.2) exactly when it keeps
  // the connection, which by default depends on what it learned of this client
  // (server/core/reuse_learner.h); NSD 4.6 never sends the option. The answers are compared
  // here; the echo has its own tests (dns_clients_test, dns_responder_test).
  auto onepassd = onepass::testing::ServerProcess::Start(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--zone", zone_flag, "--keepalive-ms", "0"});
  ASSERT_TRUE(onepassd.ok()) << onepassd.status();

  const std::vector<CorpusQuery> corpus =
      ReadCorpus(kSourceDir + "/tests/integration/dns/differential_queries.txt");
  ASSERT_GE(corpus.size(), 50u);
  int mismatches = 0;
  int exceptions_seen = 0;
  int with_answers = 0;
  for (const CorpusQuery& q : corpus) {
    auto theirs = Ask((*nsd)->port(), q);
    auto ours = Ask((*onepassd)->port(), q);
    ASSERT_TRUE(theirs.ok()) << q.line << ": NSD: " << theirs.status();
    ASSERT_TRUE(ours.ok()) << q.line << ": onepassd: " << ours.status();
    if (theirs->rcode == 0 && !theirs->answer.empty()) ++with_answers;
    const std::vector<std::string> diff = Differences(*theirs, *ours);
    if (diff.empty()) continue;
    auto exception = Exceptions().find(q.line);
    if (exception != Exceptions().end()) {
      ++exceptions_seen;
      continue;
    }
    ++mismatches;
    ADD_FAILURE() << "query '" << q.line << "' differs in: " << absl::StrJoin(diff, ", ")
                  << "\n--- NSD:\n"
                  << theirs->ToString() << "--- onepassd:\n"
                  << ours->ToString();
  }
  std::cout << zones.size() << " zone(s): " << corpus.size() << " queries, " << mismatches
            << " differences, " << exceptions_seen << " documented exceptions\n";
  EXPECT_EQ(mismatches, 0);
  // The corpus is not vacuous: most queries get data back.
  EXPECT_GE(with_answers, 40);
}

bool ToolsPresent() {
  for (const char* program : {"nsd", "nsd-checkconf"}) {
    if (!onepass::testing::ProgramExists(program)) return false;
  }
  return true;
}

TEST(DnsDifferentialTest, SameAnswersAsNsd) {
  if (!ToolsPresent()) GTEST_SKIP() << "nsd is not installed (Debian package nsd)";
  CompareWithNsd({{"example.com", kSourceDir + "/tests/data/example.com.zone"}});
}

TEST(DnsDifferentialTest, SameAnswersAsNsdWithSeveralZones) {
  // The child of example.com's delegation and an unrelated zone: answers below the cut come
  // from the child, DS at the cut from the parent, CNAMEs are followed across zones.
  if (!ToolsPresent()) GTEST_SKIP() << "nsd is not installed (Debian package nsd)";
  CompareWithNsd({{"example.com", kSourceDir + "/tests/data/example.com.zone"},
                  {"sub.example.com", kSourceDir + "/tests/data/sub.example.com.zone"},
                  {"example.net", kSourceDir + "/tests/data/example.net.zone"}});
}

TEST(DnsDifferentialTest, ComparisonSeesDifferences) {
  // A negative control for Differences(): answers that differ only in a TTL, a flag or the
  // OPT must not compare equal.
  DecodedResponse a;
  a.answer = {"www.example.com. 3600 in a 192.0.2.80"};
  DecodedResponse b = a;
  EXPECT_TRUE(Differences(a, b).empty());
  b.answer = {"www.example.com. 3599 in a 192.0.2.80"};
  EXPECT_EQ(Differences(a, b), std::vector<std::string>{"answer"});
  b = a;
  b.aa = true;
  EXPECT_EQ(Differences(a, b), std::vector<std::string>{"aa"});
  b = a;
  b.has_opt = true;
  EXPECT_EQ(Differences(a, b), std::vector<std::string>{"opt"});
}

}  // namespace
}  // namespace onepass::dns
