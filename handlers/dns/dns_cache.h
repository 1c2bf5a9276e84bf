// The DNS frontend's per-worker answer cache (--dns-cache-entries): backend answers kept for
// their TTL and served in the single pass, like a precompiled zone answer, with the client's ID
// and question case patched in and every TTL aged by the time the answer spent in the cache.
//
// Key: the query after its ID with the QNAME lowercased (RFC 4343): flags (RD, CD, opcode),
// counts, QTYPE, QCLASS and the whole OPT record (EDNS present, DO, UDP size, options) all take
// part, so two queries share an entry only when the backend would see the same question.
// Lifetime: the smallest TTL of the answer's records (OPT aside); a negative answer (NXDOMAIN,
// or NOERROR without answers) lives min(SOA TTL, SOA MINIMUM) (RFC 2308 §5) and is not cached
// without a SOA. Both are capped (max_ttl, max_negative_ttl); TTL 0, truncated, other RCODEs
// and answers over max_answer_bytes are not cached. Bounded: at most `entries`, the least
// recently used one evicted first.
//
// Serve-stale (RFC 8767), off unless serve_stale_seconds > 0: an entry is kept that long past
// its expiry, and AnswerStale serves it then, every TTL 30 s (§4), for when no backend answers
// in time, with an Extended DNS Error "Stale Answer" (RFC 8914 §4.4, INFO-CODE 3) appended to
// its OPT record when it has one (the query had EDNS) and that OPT is the message's last
// record (as servers write it; one followed by a TSIG or SIG(0) is left alone, since moving
// bytes under records that may point forward would break them); Answer never serves it stale. After
// a refresh of a stale entry failed (NoteRefreshFailed), RefreshFailedRecently says so for
// stale_refresh_seconds: RFC 8767 §4's "failure recheck", during which the stale answer is served
// without asking again. LRU eviction is unchanged: a stale entry is dropped like any other when
// room is needed.
//
// Thread-confined: one per worker handler. No clock reads: `now` is passed in.
#ifndef ONEPASS_HANDLERS_DNS_DNS_CACHE_H_
#define ONEPASS_HANDLERS_DNS_DNS_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/output_buffer.h"

namespace onepass::dns {

struct CacheConfig {
  size_t entries = 10000;  // 0: off
  uint32_t max_ttl = 86400;
  uint32_t max_negative_ttl = 3600;
  size_t max_answer_bytes = 4096;
  uint32_t serve_stale_seconds = 0;     // RFC 8767 §5 maximum stale timer; 0: no stale answers
  uint32_t stale_refresh_seconds = 30;  // RFC 8767 §4 failure recheck; 0: ask every time

  bool operator==(const CacheConfig&) const = default;
};

class DnsCache {
 public:
  // RFC 8767 §4: the TTL of a stale answer's records.
  static constexpr uint32_t kStaleTtl = 30;

  explicit DnsCache(const CacheConfig& config) : config_(config) {}

  bool enabled() const { return config_.entries > 0; }
  size_t size() const { return map_.size(); }

  // The key of `query` (a whole message) into `key`: false when it is not cacheable (not a
  // standard query with one question).
  static bool MakeKey(absl::Span<const uint8_t> query, size_t qname_bytes, std::string& key);

  // Appends (framed) the cached answer for `key` to `out`, with `id` and the QNAME bytes of
  // `query` patched in and TTLs aged; false on a miss (or an expired entry, then dropped) or
  // when `out` lacks room.
  bool Answer(absl::string_view key, absl::Span<const uint8_t> query, size_t qname_bytes,
              absl::Time now, OutputBuffer& out);

  // As Answer, for an entry whose TTL has passed less than serve_stale_seconds ago, with
  // every TTL set to kStaleTtl (RFC 8767 §4); false otherwise (a fresh entry included: Answer
  // serves it).
  bool AnswerStale(absl::string_view key, absl::Span<const uint8_t> query, size_t qname_bytes,
                   absl::Time now, OutputBuffer& out);

  // An entry for `key` whose TTL has passed less than serve_stale_seconds ago: AnswerStale
  // would serve it.
  bool HasStale(absl::string_view key, absl::Time now) const;
  // A refresh of `key`'s stale entry failed at `now` (no answer by the deadline, or
  // SERVFAIL): for stale_refresh_seconds RefreshFailedRecently is true. No-op without a stale
  // entry.
  void NoteRefreshFailed(absl::string_view key, absl::Time now);
  bool RefreshFailedRecently(absl::string_view key, absl::Time now) const;

  // Keeps `response` (a whole message) for `key` if it is cacheable.
  void Insert(absl::string_view key, absl::Span<const uint8_t> response, absl::Time now);

 private:
  struct Entry {
    std::string key;
    std::vector<uint8_t> response;
    std::vector<uint16_t> ttl_offsets;  // TTL fields to age (OPT's is no TTL)
    // The OPT's RDLENGTH field when the OPT is the last record (an EDE option can be
    // appended to the message); 0: none.
    uint16_t opt_rdlength_at = 0;
    absl::Time stored;
    absl::Time expires;
    absl::Time refresh_failed_until = absl::InfinitePast();
  };
  // The entry for `key` when it is stale within the window, else nullptr.
  const Entry* FindStale(absl::string_view key, absl::Time now) const;
  using List = std::list<Entry>;

  // Appends (framed) `entry`'s answer with the query's ID and QNAME, each TTL set by
  // `ttl(stored TTL)`, and `option` (a whole EDNS option, or empty) at the end of its OPT
  // RDATA when opt_rdlength_at allows; false when `out` lacks room.
  template <typename TtlFn>
  static bool Append(const Entry& entry, absl::Span<const uint8_t> query, size_t qname_bytes,
                     TtlFn ttl, absl::Span<const uint8_t> option, OutputBuffer& out);
  void Erase(List::iterator entry);

  CacheConfig config_;
  List lru_;                                                    // most recently used first
  absl::flat_hash_map<absl::string_view, List::iterator> map_;  // views into Entry::key
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_CACHE_H_
