// The frontend's query IDs (RFC 5452 §9.2): drawn at random from the free ones, never the ID
// just freed, and a freed ID is not drawn again before kQuarantinedIds others are freed.
#include "handlers/dns/frontend_backends.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace onepass::dns {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'000'000);

TEST(FrontendBackendsIds, OneQueryAtATimeGetsAFreshUnpredictableIdEachTime) {
  FrontendBackends backends(BackendsConfig{});
  std::set<uint16_t> seen;
  std::optional<uint16_t> previous;
  constexpr int kQueries = 2000;
  for (int i = 0; i < kQueries; ++i) {
    const std::optional<uint16_t> id = backends.Allocate(0, kNow, false);
    ASSERT_TRUE(id.has_value());
    if (previous.has_value()) {
      EXPECT_NE(*id, *previous) << "the ID just freed came back";
    }
    seen.insert(*id);
    backends.Complete(0, *id);
    previous = id;
  }
  // Within the quarantine no ID repeats at all.
  EXPECT_EQ(seen.size(), static_cast<size_t>(kQueries));
}

TEST(FrontendBackendsIds, AFreedIdRestsUntilTheQuarantineHasPassedIt) {
  FrontendBackends backends(BackendsConfig{});
  const uint16_t first = *backends.Allocate(0, kNow, false);
  backends.Complete(0, first);
  for (size_t i = 0; i < kQuarantinedIds; ++i) {
    const uint16_t id = *backends.Allocate(0, kNow, false);
    EXPECT_NE(id, first) << "after " << i << " draws";
    backends.Complete(0, id);
  }
}

TEST(FrontendBackendsIds, DrawsSpreadOverTheWholeIdSpace) {
  // 65536 - kQuarantinedIds in flight at once: each is distinct, and the high and low halves
  // of the space both appear in the first draws (an ID counter would start at 0).
  FrontendBackends backends(BackendsConfig{.max_in_flight = 65536});
  std::set<uint16_t> ids;
  int high = 0;
  for (int i = 0; i < 64; ++i) {
    const uint16_t id = *backends.Allocate(0, kNow, false);
    high += id >= 32768;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 64u);
  EXPECT_GT(high, 8);
  EXPECT_LT(high, 56);
}

TEST(FrontendBackendsIds, EveryIdCanBeInFlightAtOnceAndTheNextIsRefused) {
  FrontendBackends backends(BackendsConfig{.max_in_flight = 65536});
  std::vector<uint16_t> taken;
  for (int i = 0; i < 65536; ++i) {
    const std::optional<uint16_t> id = backends.Allocate(0, kNow, false);
    ASSERT_TRUE(id.has_value()) << i;
    taken.push_back(*id);
  }
  EXPECT_EQ(std::set<uint16_t>(taken.begin(), taken.end()).size(), 65536u);
  EXPECT_FALSE(backends.Allocate(0, kNow, false).has_value());
  // With every other ID quarantined, a freed one is all there is: it is drawn.
  backends.Complete(0, taken[123]);
  EXPECT_EQ(backends.Allocate(0, kNow, false), taken[123]);
}

}  // namespace
}  // namespace onepass::dns
