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

// Slots (--dns-backends-file): a vacant one is never picked nor probed; TakeOverFrom moves a
// kept slot whole (its query, its deadline, its health: down stays down) and leaves the other
// slots' queries with the old instance, which expires them at once for TakeAbandoned.
TEST(FrontendBackendsSlots, TakeOverMovesTheKeptSlotsAndLeavesTheRest) {
  // No UDP deadline (as long as the final one): every expiry below is a final one.
  const BackendsConfig config{.backends = 3, .down_after = 1, .udp_timeout = absl::Seconds(1)};
  FrontendBackends old(config);
  // Slot 2 goes down: its query times out, then its probe.
  old.Allocate(2, kNow, false);
  const absl::Time later = kNow + config.timeout;
  while (old.PopExpired(later).has_value()) {
  }
  ASSERT_EQ(old.DueProbe(later), 2);
  old.Allocate(2, later, /*probe=*/true);
  while (old.PopExpired(later + config.timeout).has_value()) {
  }
  ASSERT_FALSE(old.up(2));
  ASSERT_EQ(old.in_flight(), 0u);

  // One query on slot 0, one on slot 1.
  const uint16_t on_zero = *old.Allocate(0, later, false);
  const uint16_t on_one = *old.Allocate(1, later, false);
  BackendsConfig next_config = config;
  next_config.present = {false, true, true};  // slot 0 removed
  FrontendBackends next(next_config);
  EXPECT_FALSE(next.present(0));
  next.TakeOverFrom(old, {false, true, true});
  EXPECT_EQ(next.in_flight(), 1u);
  EXPECT_EQ(old.in_flight(), 1u);
  ASSERT_NE(next.Find(1, on_one), nullptr);
  EXPECT_EQ(next.Find(0, on_zero), nullptr);
  EXPECT_FALSE(next.up(2)) << "a down backend stays down across the reload";
  EXPECT_TRUE(next.up(1));
  // Only slot 1 is picked: 0 is vacant, 2 is down.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(next.Pick(), 1);
  // The kept query keeps its deadline: it expires in `next` at the old time, not later.
  const std::optional<FrontendBackends::Expired> expired = next.PopExpired(later + config.timeout);
  ASSERT_TRUE(expired.has_value());
  EXPECT_EQ(expired->backend, 1);
  EXPECT_EQ(expired->id, on_one);
  // The old instance holds only slot 0's query, expired at once for TakeAbandoned.
  const std::optional<FrontendBackends::Expired> abandoned = old.PopExpired(absl::InfiniteFuture());
  ASSERT_TRUE(abandoned.has_value());
  EXPECT_EQ(abandoned->backend, 0);
  EXPECT_EQ(abandoned->id, on_zero);
  EXPECT_FALSE(old.PopExpired(absl::InfiniteFuture()).has_value());
  // A vacant slot is never due a probe.
  EXPECT_NE(next.DueProbe(later + absl::Hours(1)), 0);
}

}  // namespace
}  // namespace onepass::dns
