// Loads a generated database of 100k domains (scripts/gen-whois-db.py) in bounded time and
// looks up domains the generator says it wrote. The 1M-domain figure is measured by hand (see
// handlers/whois/README.md); 100k keeps this test a few seconds on a CI core.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "handlers/whois/whois_db.h"
#include "handlers/whois/whois_handler.h"
#include "handlers/whois/whois_responder.h"
#include "tests/support/subprocess.h"

namespace onepass::whois {
namespace {

constexpr int kDomains = 100000;

TEST(WhoisLoadTest, GeneratedHundredThousandDomains) {
  const std::string path =
      ::testing::TempDir() + "/whois_load_test_" + std::to_string(getpid()) + ".db";
  auto generated = onepass::testing::RunCommand(
      {"python3", std::string(ONEPASS_SOURCE_DIR) + "/scripts/gen-whois-db.py", "--domains",
       std::to_string(kDomains), "--seed", "7", "--output", path, "--print-sample", "20"},
      absl::Seconds(120));
  ASSERT_TRUE(generated.ok()) << generated.status();
  ASSERT_EQ(generated->exit_code, 0) << generated->err;
  const std::vector<std::string> samples =
      absl::StrSplit(generated->err, '\n', absl::SkipWhitespace());
  ASSERT_EQ(samples.size(), 20u) << generated->err;

  const absl::Time start = absl::Now();
  auto snapshot = LoadWhoisDbFile(path);
  const absl::Duration took = absl::Now() - start;
  std::remove(path.c_str());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  const WhoisSnapshotStats& stats = (*snapshot)->stats();
  EXPECT_EQ(stats.domains, static_cast<size_t>(kDomains));
  EXPECT_GT(stats.contacts, 0u);
  EXPECT_GT(stats.nameservers, 0u);
  // Sharing works: far fewer shared blocks than domains, and a bounded cost per domain.
  EXPECT_LT(stats.shared_pieces, stats.domains / 2);
  const double bytes_per_domain =
      static_cast<double>(stats.text_bytes + stats.index_bytes) / stats.domains;
  EXPECT_LT(bytes_per_domain, 600.0);
  // Generous bound (sanitizer builds are slow); the release figure is ~10x lower.
  EXPECT_LT(took, absl::Seconds(60));
  std::printf("loaded %zu domains in %.2f s, %.0f bytes per domain\n", stats.domains,
              absl::ToDoubleSeconds(took), bytes_per_domain);

  WhoisConfig config;
  WhoisHandlerFactory factory(*snapshot, config);
  HandlerCounters counters(factory.Counters().size());
  WhoisResponder responder(*snapshot, config, counters);
  for (const std::string& name : samples) {
    OutputBuffer out(factory.OutputBufferBytes());
    ASSERT_TRUE(responder.Respond(name, out)) << name;
    const std::string reply(reinterpret_cast<const char*>(out.data()), out.size());
    EXPECT_TRUE(absl::StartsWith(reply, "   Domain Name: " + absl::AsciiStrToUpper(name)))
        << reply.substr(0, 200);
  }
}

}  // namespace
}  // namespace onepass::whois
