// The per-client Whois rate limit: GCRA arithmetic, exemptions, and the fixed table's
// eviction, with time passed in.
#include "handlers/whois/whois_rate_limiter.h"

#include <array>
#include <cstdint>

#include "gtest/gtest.h"

namespace onepass::whois {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1800000000);

std::array<uint8_t, 16> V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

WhoisRateLimitConfig Config(double qps, uint32_t burst, size_t entries = 1024) {
  WhoisRateLimitConfig config;
  config.queries_per_second = qps;
  config.burst = burst;
  config.table_entries = entries;
  return config;
}

using Decision = WhoisRateLimiter::Decision;

TEST(WhoisRateLimiterTest, BurstThenSustainedRate) {
  WhoisRateLimiter limiter(Config(2, 5));
  const auto peer = V4(192, 0, 2, 1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(limiter.Admit(peer, kStart), Decision::kAllow) << i;
  EXPECT_EQ(limiter.Admit(peer, kStart), Decision::kRefuse);
  // Refusals do not push the client further back: one interval (0.5 s) frees one query.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(limiter.Admit(peer, kStart), Decision::kRefuse);
  EXPECT_EQ(limiter.Admit(peer, kStart + absl::Milliseconds(499)), Decision::kRefuse);
  EXPECT_EQ(limiter.Admit(peer, kStart + absl::Milliseconds(500)), Decision::kAllow);
  EXPECT_EQ(limiter.Admit(peer, kStart + absl::Milliseconds(500)), Decision::kRefuse);
  // A steady 2 queries per second is always served.
  absl::Time t = kStart + absl::Seconds(10);
  for (int i = 0; i < 100; ++i, t += absl::Milliseconds(500)) {
    EXPECT_EQ(limiter.Admit(peer, t), Decision::kAllow) << i;
  }
  // Other clients are counted apart.
  EXPECT_EQ(limiter.Admit(V4(192, 0, 2, 2), kStart), Decision::kAllow);
}

TEST(WhoisRateLimiterTest, OffExemptAndUnknownPeers) {
  WhoisRateLimiter off(Config(0, 1));
  EXPECT_FALSE(off.enabled());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(off.Admit(V4(192, 0, 2, 1), kStart), Decision::kAllow);

  WhoisRateLimitConfig config = Config(1, 1);
  auto exempt = ParseAddressPrefixList("127.0.0.0/8, ::1/128,2001:db8::/32");
  ASSERT_TRUE(exempt.ok()) << exempt.status();
  config.exempt = *exempt;
  WhoisRateLimiter limiter(config);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(limiter.Admit(V4(127, 1, 2, 3), kStart), Decision::kAllow);
    EXPECT_EQ(limiter.Admit(std::array<uint8_t, 16>{}, kStart), Decision::kAllow);  // unknown
  }
  std::array<uint8_t, 16> v6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9};
  EXPECT_EQ(limiter.Admit(v6, kStart), Decision::kAllow);
  EXPECT_EQ(limiter.Admit(v6, kStart), Decision::kAllow);
  v6[3] = 0xb9;  // outside 2001:db8::/32
  EXPECT_EQ(limiter.Admit(v6, kStart), Decision::kAllow);
  EXPECT_EQ(limiter.Admit(v6, kStart), Decision::kRefuse);
  EXPECT_EQ(limiter.Admit(V4(128, 0, 0, 1), kStart), Decision::kAllow);
  EXPECT_EQ(limiter.Admit(V4(128, 0, 0, 1), kStart), Decision::kRefuse);
}

// The table is fixed: more clients than slots evict the fullest buckets first, so a client
// being limited keeps its state while idle clients come and go.
TEST(WhoisRateLimiterTest, BoundedTableEvictsIdleClientsFirst) {
  WhoisRateLimiter limiter(Config(1, 2, /*entries=*/4));  // one set of 4 ways
  EXPECT_EQ(limiter.table_entries(), 4u);
  const auto hammer = V4(198, 51, 100, 1);
  EXPECT_EQ(limiter.Admit(hammer, kStart), Decision::kAllow);
  EXPECT_EQ(limiter.Admit(hammer, kStart), Decision::kAllow);
  EXPECT_EQ(limiter.Admit(hammer, kStart), Decision::kRefuse);
  // 1000 one-off clients, one per 10 s: their buckets are full again when the next comes.
  absl::Time t = kStart;
  for (int i = 0; i < 1000; ++i) {
    t += absl::Milliseconds(1);
    EXPECT_EQ(limiter.Admit(V4(203, 0, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)), t),
              Decision::kAllow);
  }
  // Still limited: its entry was the one never chosen (1000 ms later it has 1 query back).
  EXPECT_EQ(limiter.Admit(hammer, t), Decision::kAllow);
  EXPECT_EQ(limiter.Admit(hammer, t), Decision::kRefuse);
  // When every slot is a limited client, a new one evicts one of them: counted.
  WhoisRateLimiter small(Config(1, 1, 4));
  for (uint8_t i = 0; i < 5; ++i) EXPECT_EQ(small.Admit(V4(10, 0, 0, i), kStart), Decision::kAllow);
  EXPECT_EQ(small.evictions_of_limited(), 1u);
}

}  // namespace
}  // namespace onepass::whois
