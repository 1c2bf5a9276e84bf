// Per-client query rate limiting for the Whois handler: a public Whois server must defend its
// data against scraping (the registries' terms of use forbid "high volume, automated"
// queries, and their servers refuse clients that exceed a rate).
//
// Each client address gets a token bucket of `burst` queries refilled at `queries_per_second`,
// kept as one timestamp (GCRA, the generic cell rate algorithm of ITU-T I.371: the
// "theoretical arrival time" of the next query; a query is allowed when it is no more than
// (burst - 1) intervals early). Allowed queries push it one interval on; refused ones do not,
// so a client that keeps hammering is not punished beyond the rate.
//
// Per worker, not global: each worker (thread) owns one limiter and uses it without locks, so
// the limit holds per worker. With CPU steering (server/listener.cc) a client's connections
// land on the worker of the CPU that handled its packets, which for one client address is
// usually one worker: the effective limit is then the configured one. A client spread over
// several workers gets up to that many times the rate.
//
// Bounded memory: a fixed table of `table_entries` slots in sets of 4 (set-associative, chosen
// by a hash of the address). A new client takes the slot in its set whose bucket is fullest
// (its timestamp the oldest): a full bucket is the same as no entry, so eviction only loses
// state when every slot of the set belongs to a client still being limited (counted, so an
// operator knows to grow the table). Thread-confined; no allocation after construction.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_RATE_LIMITER_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_RATE_LIMITER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/address_prefix.h"

namespace onepass::whois {

struct WhoisRateLimitConfig {
  // Sustained queries per second per client address; 0 (the library default) turns the
  // limit off. The flags default to 2 (whois_flags.cc).
  double queries_per_second = 0;
  // Queries a client may send at once after being idle (>= 1).
  uint32_t burst = 20;
  // Clients tracked per worker (rounded up to a power of two, at least 4): 24 bytes each.
  size_t table_entries = 16384;
  // Never limited: by default the host itself (loopback), whose monitoring and benchmarks are
  // not scrapers. The all-zero address (unknown peer) is never limited either.
  std::vector<AddressPrefix> exempt;
};

class WhoisRateLimiter {
 public:
  explicit WhoisRateLimiter(const WhoisRateLimitConfig& config);

  enum class Decision { kAllow, kRefuse };

  // Counts one query from `peer` at `now` and says whether to answer it.
  Decision Admit(const std::array<uint8_t, 16>& peer, absl::Time now);

  bool enabled() const { return interval_us_ > 0; }
  // Entries evicted while their client was still limited (the table is too small).
  uint64_t evictions_of_limited() const { return evictions_of_limited_; }
  size_t table_entries() const { return entries_.size(); }

 private:
  static constexpr size_t kWays = 4;
  struct Entry {
    std::array<uint8_t, 16> address{};
    int64_t next_us = 0;  // theoretical arrival time [us since the epoch]; 0: free
  };

  int64_t interval_us_ = 0;   // 1 / rate [us]; 0: off
  int64_t tolerance_us_ = 0;  // (burst - 1) * interval [us]
  std::vector<AddressPrefix> exempt_;
  std::vector<Entry> entries_;
  size_t set_mask_ = 0;
  uint64_t evictions_of_limited_ = 0;
};

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_RATE_LIMITER_H_
