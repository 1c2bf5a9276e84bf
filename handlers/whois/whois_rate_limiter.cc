#include "handlers/whois/whois_rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/hash/hash.h"

namespace onepass::whois {

WhoisRateLimiter::WhoisRateLimiter(const WhoisRateLimitConfig& config) : exempt_(config.exempt) {
  if (!(config.queries_per_second > 0)) return;  // off: no table
  interval_us_ =
      std::max<int64_t>(1, static_cast<int64_t>(std::llround(1e6 / config.queries_per_second)));
  tolerance_us_ = interval_us_ * (static_cast<int64_t>(std::max<uint32_t>(config.burst, 1)) - 1);
  size_t entries = kWays;
  while (entries < config.table_entries) entries *= 2;
  entries_.resize(entries);
  set_mask_ = entries / kWays - 1;
}

WhoisRateLimiter::Decision WhoisRateLimiter::Admit(const std::array<uint8_t, 16>& peer,
                                                   absl::Time now) {
  if (!enabled() || peer == std::array<uint8_t, 16>{}) return Decision::kAllow;
  for (const AddressPrefix& prefix : exempt_) {
    if (prefix.Contains(peer)) return Decision::kAllow;
  }
  const int64_t now_us = absl::ToUnixMicros(now);
  Entry* set = &entries_[(absl::Hash<std::array<uint8_t, 16>>{}(peer)&set_mask_) * kWays];
  Entry* entry = nullptr;
  Entry* oldest = set;
  for (size_t way = 0; way < kWays; ++way) {
    if (set[way].next_us != 0 && set[way].address == peer) {
      entry = &set[way];
      break;
    }
    if (set[way].next_us < oldest->next_us) oldest = &set[way];
  }
  if (entry == nullptr) {
    // The fullest bucket goes; if even it is still limiting its client, that state is lost.
    if (oldest->next_us > now_us) ++evictions_of_limited_;
    entry = oldest;
    entry->address = peer;
    entry->next_us = now_us;
  }
  const int64_t next = std::max(entry->next_us, now_us);
  if (next - now_us > tolerance_us_) return Decision::kRefuse;
  entry->next_us = next + interval_us_;
  return Decision::kAllow;
}

}  // namespace onepass::whois
