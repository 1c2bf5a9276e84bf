// Differential test on signed zones: tests/data/dnssec/example.org.zone is signed at test time
// (signed_zone.h: ldns-keygen + ldns-signzone, NSEC, NSEC3 and NSEC3 opt-out), served by NSD
// and by onepassd, and every query of dnssec_queries.txt goes to both twice: as written and
// with the DO bit (RFC 3225). Answers must agree as in dns_differential_test: RCODE, flags,
// the question, every section as a set of records with TTLs (RRSIGs and NSEC/NSEC3 proofs
// included), the OPT.
#include <iostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/differential_corpus.h"
#include "tests/integration/dns/nsd_process.h"
#include "tests/integration/dns/signed_zone.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace onepass::dns {
namespace {

using testing::CorpusQuery;
using testing::Denial;

const std::string kSourceDir = ONEPASS_SOURCE_DIR;

// Deliberate differences, each justified by the RFC that decides it; keyed by
// "<denial>|<query line>|<do or plain>".
const absl::flat_hash_map<std::string, std::string>& Exceptions() {
  static const auto* exceptions = new absl::flat_hash_map<std::string, std::string>{
      // (none: every query of the corpus must agree)
  };
  return *exceptions;
}

struct Setup {
  Denial denial;
  // Also serve the signed child zone secure.example.org (NSEC): answers below the cut come
  // from the child, the DS from the parent, CNAMEs cross into the child.
  bool with_child;
};

class DnssecDifferentialTest : public ::testing::TestWithParam<Setup> {};

TEST_P(DnssecDifferentialTest, SameAnswersAsNsd) {
  for (const char* program : {"nsd", "nsd-checkconf", "ldns-keygen", "ldns-signzone"}) {
    if (!onepass::testing::ProgramExists(program)) GTEST_SKIP() << program << " missing";
  }
  const Denial denial = GetParam().denial;
  auto zone = testing::SignedZone::Make(kSourceDir + "/tests/data/dnssec/example.org.zone",
                                        "example.org", denial);
  ASSERT_TRUE(zone.ok()) << zone.status();
  std::vector<testing::NsdProcess::ZoneFile> zones = {{"example.org", (*zone)->path()}};
  std::string zone_flag = (*zone)->path();
  std::unique_ptr<testing::SignedZone> child;
  if (GetParam().with_child) {
    auto made = testing::SignedZone::Make(kSourceDir + "/tests/data/dnssec/secure.example.org.zone",
                                          "secure.example.org", Denial::kNsec);
    ASSERT_TRUE(made.ok()) << made.status();
    child = *std::move(made);
    zones.push_back({"secure.example.org", child->path()});
    zone_flag += "," + child->path();
  }
  auto nsd = testing::NsdProcess::Start(zones);
  ASSERT_TRUE(nsd.ok()) << nsd.status();
  auto onepassd = onepass::testing::ServerProcess::Start(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--zone", zone_flag});
  ASSERT_TRUE(onepassd.ok()) << onepassd.status();

  const std::vector<CorpusQuery> corpus =
      testing::ReadCorpus(kSourceDir + "/tests/integration/dns/dnssec_queries.txt");
  ASSERT_GE(corpus.size(), 150u);
  int compared = 0;
  int mismatches = 0;
  int exceptions_seen = 0;
  int with_rrsigs = 0;
  for (const CorpusQuery& written : corpus) {
    for (const bool do_bit : {false, true}) {
      CorpusQuery q = written;
      if (do_bit) q.options.edns = q.options.do_bit = true;
      auto theirs = testing::Ask((*nsd)->port(), q);
      auto ours = testing::Ask((*onepassd)->port(), q);
      ASSERT_TRUE(theirs.ok()) << q.line << ": NSD: " << theirs.status();
      ASSERT_TRUE(ours.ok()) << q.line << ": onepassd: " << ours.status();
      ++compared;
      if (do_bit && absl::StrContains(theirs->ToString(), " rrsig ")) ++with_rrsigs;
      const std::vector<std::string> diff = testing::Differences(*theirs, *ours);
      if (diff.empty()) continue;
      const std::string key =
          absl::StrCat(testing::DenialName(denial), "|", q.line, "|", do_bit ? "do" : "plain");
      if (Exceptions().contains(key)) {
        ++exceptions_seen;
        continue;
      }
      ++mismatches;
      ADD_FAILURE() << testing::DenialName(denial) << ": query '" << q.line << "'"
                    << (do_bit ? " with DO" : "") << " differs in: " << absl::StrJoin(diff, ", ")
                    << "\n--- NSD:\n"
                    << theirs->ToString() << "--- onepassd:\n"
                    << ours->ToString();
    }
  }
  std::cout << testing::DenialName(denial) << (GetParam().with_child ? " with child" : "") << ": "
            << compared << " answers compared, " << mismatches << " differences, "
            << exceptions_seen << " documented exceptions, " << with_rrsigs
            << " DO answers with RRSIGs\n";
  EXPECT_EQ(mismatches, 0);
  // Not vacuous: most DO answers carry signatures (positive data or signed proofs).
  EXPECT_GE(with_rrsigs, 120);
}

INSTANTIATE_TEST_SUITE_P(Signings, DnssecDifferentialTest,
                         ::testing::Values(Setup{Denial::kNsec, false},
                                           Setup{Denial::kNsec3, false},
                                           Setup{Denial::kNsec3OptOut, false},
                                           Setup{Denial::kNsec3, true}),
                         [](const ::testing::TestParamInfo<Setup>& info) {
                           std::string name = info.param.denial == Denial::kNsec    ? "Nsec"
                                              : info.param.denial == Denial::kNsec3 ? "Nsec3"
                                                                                    : "Nsec3OptOut";
                           return info.param.with_child ? name + "WithSignedChild" : name;
                         });

}  // namespace
}  // namespace onepass::dns
