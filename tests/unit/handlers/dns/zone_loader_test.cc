#include "handlers/dns/zone_loader.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "handlers/dns/default_zone.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/load_phases.h"

namespace onepass::dns {
namespace {

using ::testing::HasSubstr;

std::string Canonical(const char* text) {
  // "a.b." -> wire
  std::string out;
  std::string label;
  for (const char* p = text; *p; ++p) {
    if (*p == '.') {
      out.push_back(static_cast<char>(label.size()));
      out += label;
      label.clear();
    } else {
      label.push_back(*p);
    }
  }
  out.push_back('\0');
  return out;
}

absl::StatusOr<std::unique_ptr<Zone>> Parse(const std::string& text) {
  return ParseZone(ZoneSource{"test.zone", text});
}

TEST(ZoneLoaderTest, DefaultZoneMatchesCommittedFile) {
  std::ifstream in(std::string(ONEPASS_SOURCE_DIR) + "/tests/data/example.com.zone");
  ASSERT_TRUE(in) << "tests/data/example.com.zone missing";
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::string(DefaultZoneText()));
}

TEST(ZoneLoaderTest, DefaultZoneIndex) {
  auto zone = Parse(std::string(DefaultZoneText()));
  ASSERT_TRUE(zone.ok()) << zone.status();
  const Zone& z = **zone;
  EXPECT_EQ(z.origin(), Canonical("example.com."));
  ASSERT_NE(z.apex_ns(), nullptr);
  EXPECT_EQ(z.apex_ns()->records.size(), 2u);
  EXPECT_EQ(z.negative_soa().records[0].ttl, 300u);
  // Empty non-terminals exist, names not in the zone do not.
  EXPECT_NE(z.FindNode(Canonical("c.example.com.")), nullptr);
  EXPECT_NE(z.FindNode(Canonical("b.c.example.com.")), nullptr);
  EXPECT_TRUE(z.FindNode(Canonical("b.c.example.com."))->rrsets.empty());
  EXPECT_EQ(z.FindNode(Canonical("nx.example.com.")), nullptr);
  EXPECT_EQ(z.ClosestEncloser(Canonical("x.y.b.c.example.com.")), Canonical("b.c.example.com."));
  EXPECT_EQ(z.FindDelegation(Canonical("a.ns.sub.example.com.")), Canonical("sub.example.com."));
  EXPECT_EQ(z.FindDelegation(Canonical("www.example.com.")), "");
  // Owner names are case-folded at load; rdata keeps its case.
  const Node* mx = z.FindNode(Canonical("example.com."));
  ASSERT_NE(mx->Find(kTypeMx), nullptr);
  EXPECT_EQ(mx->Find(kTypeMx)->records[0].target, Canonical("mail.example.com."));
}

TEST(ZoneLoaderTest, TtlDefaults) {
  // RFC 1035 §5.1: without $TTL an omitted TTL is the last one stated; $TTL sets it after.
  auto zone = Parse(
      "$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\nx IN A 192.0.2.1\ny 120 IN A 192.0.2.2\n"
      "z IN A 192.0.2.3\n$TTL 30\nw IN A 192.0.2.4\n");
  ASSERT_TRUE(zone.ok()) << zone.status();
  auto ttl = [&](const char* name) {
    return (*zone)->FindNode(Canonical(name))->Find(kTypeA)->records[0].ttl;
  };
  EXPECT_EQ(ttl("x.a."), 60u);
  EXPECT_EQ(ttl("y.a."), 120u);
  EXPECT_EQ(ttl("z.a."), 120u);
  EXPECT_EQ(ttl("w.a."), 30u);
}

TEST(ZoneLoaderTest, CaseInsensitiveOwners) {
  auto zone = Parse(
      "$ORIGIN Example.ORG.\n@ 60 IN SOA ns hm 1 2 3 4 5\nWWW 60 IN A 192.0.2.1\n"
      "www 60 IN A 192.0.2.2\n");
  ASSERT_TRUE(zone.ok()) << zone.status();
  const Node* www = (*zone)->FindNode(Canonical("www.example.org."));
  ASSERT_NE(www, nullptr);
  EXPECT_EQ(www->Find(kTypeA)->records.size(), 2u);
}

TEST(ZoneLoaderTest, ErrorsNameFileAndLine) {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\nx 60 IN A 999.1.1.1\n", "test.zone:3"},
      {"$ORIGIN a.\n@ 60 IN A 192.0.2.1\n", "test.zone:2: the first record must be the zone's SOA"},
      {"$ORIGIN a.\n; only a comment\n", "no SOA"},
      {"$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\n$INCLUDE other.zone\n", "$INCLUDE"},
      {"$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\n@ 60 IN SOA ns hm 2 2 3 4 5\n",
       "test.zone:3: more than one SOA"},
      {"$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\nb. 60 IN A 192.0.2.1\n",
       "test.zone:3: record outside zone"},
      {"$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\nx 60 IN CNAME y\nx 60 IN A 192.0.2.1\n",
       "CNAME and other data"},
      {"$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\nx 60 IN CNAME y\nx 60 IN CNAME z\n",
       "more than one CNAME"},
      {"$ORIGIN a.\n@ 60 CH SOA ns hm 1 2 3 4 5\n", "class IN"},
      {"", "empty zone"},
  };
  for (const Case& c : cases) {
    auto zone = Parse(c.text);
    ASSERT_FALSE(zone.ok()) << c.text;
    EXPECT_THAT(zone.status().message(), HasSubstr(c.error)) << c.text;
  }
}

TEST(ZoneLoaderTest, SnapshotRejectsDuplicateOriginsAndFindsLongestZone) {
  const std::string parent = "$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\n";
  const std::string child = "$ORIGIN b.a.\n@ 60 IN SOA ns hm 1 2 3 4 5\n";
  EXPECT_FALSE(BuildSnapshot({{"one", parent}, {"two", parent}}).ok());
  auto snapshot = BuildSnapshot({{"one", parent}, {"two", child}});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ((*snapshot)->FindZone(Canonical("x.b.a."))->origin(), Canonical("b.a."));
  EXPECT_EQ((*snapshot)->FindZone(Canonical("x.a."))->origin(), Canonical("a."));
  EXPECT_EQ((*snapshot)->FindZone(Canonical("x.c.")), nullptr);
  EXPECT_FALSE(LoadZoneFiles({"/nonexistent/zone"}).ok());
}

// The reload log line's phases: each zone file adds to "parse" and "index", in that order.
TEST(ZoneLoaderTest, PhasesAreMarkedPerZoneAndAddUp) {
  const std::string parent = "$ORIGIN a.\n@ 60 IN SOA ns hm 1 2 3 4 5\nwww 60 IN A 192.0.2.1\n";
  const std::string child = "$ORIGIN b.a.\n@ 60 IN SOA ns hm 1 2 3 4 5\n";
  LoadPhaseTimer phases;
  ZoneLoadOptions options;
  options.phases = &phases;
  ASSERT_TRUE(BuildSnapshot({{"one", parent}, {"two", child}}, options).ok());
  phases.Mark("precompile");
  ASSERT_EQ(phases.phases().size(), 3u);
  EXPECT_EQ(phases.phases()[0].name, "parse");
  EXPECT_EQ(phases.phases()[1].name, "index");
  EXPECT_EQ(phases.phases()[2].name, "precompile");
  for (const LoadPhase& phase : phases.phases()) {
    EXPECT_GE(phase.wall, absl::ZeroDuration()) << phase.name;
    EXPECT_GE(phase.cpu, absl::ZeroDuration()) << phase.name;
  }
  const std::string line = FormatLoadPhases(phases.phases());
  EXPECT_THAT(line, ::testing::StartsWith("parse ")) << line;
  EXPECT_THAT(line, HasSubstr(", index ")) << line;
  EXPECT_THAT(line, HasSubstr(", precompile ")) << line;
}

TEST(LoadPhasesTest, FormatShowsWaitingOnlyWhereTheThreadWaited) {
  const std::vector<LoadPhase> phases = {
      {"read", absl::Milliseconds(20), absl::Milliseconds(19), absl::ZeroDuration()},
      {"parse", absl::Milliseconds(1500), absl::Milliseconds(800), absl::Milliseconds(600)}};
  EXPECT_EQ(FormatLoadPhases(phases), "read 20ms, parse 1.50s (cpu 800ms, runq 600ms)");
  EXPECT_EQ(FormatLoadPhases({}), "");
}

}  // namespace
}  // namespace onepass::dns
