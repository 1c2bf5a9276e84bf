#include "handlers/dns/dns_cache.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

constexpr uint16_t kTypeSoa = 6;
constexpr uint16_t kTypeOpt = 41;

// Skips a (possibly compressed) name at `at`; the offset after it, or nullopt.
std::optional<size_t> SkipName(absl::Span<const uint8_t> m, size_t at) {
  while (at < m.size()) {
    const uint8_t length = m[at];
    if (length == 0) return at + 1;
    if ((length & 0xc0) == 0xc0) return at + 2 <= m.size() ? std::optional(at + 2) : std::nullopt;
    if (length > 63) return std::nullopt;
    at += 1 + length;
  }
  return std::nullopt;
}

// What Insert needs from a response: its TTL offsets and its lifetime; nullopt when it cannot
// be walked or must not be cached.
struct Walk {
  std::vector<uint16_t> ttl_offsets;
  size_t opt_rdlength_at = 0;  // of the OPT record, when it is the last one; else 0
  uint32_t min_ttl = UINT32_MAX;
  std::optional<uint32_t> negative_ttl;  // min(SOA TTL, SOA MINIMUM) of the authority SOA
};
std::optional<Walk> WalkResponse(absl::Span<const uint8_t> m) {
  Walk walk;
  const uint16_t qdcount = ReadU16(m.data() + 4);
  const uint16_t counts[3] = {ReadU16(m.data() + 6), ReadU16(m.data() + 8), ReadU16(m.data() + 10)};
  size_t at = kHeaderBytes;
  for (int i = 0; i < qdcount; ++i) {
    std::optional<size_t> end = SkipName(m, at);
    if (!end.has_value() || *end + 4 > m.size()) return std::nullopt;
    at = *end + 4;
  }
  for (int section = 0; section < 3; ++section) {
    for (int i = 0; i < counts[section]; ++i) {
      std::optional<size_t> end = SkipName(m, at);
      if (!end.has_value() || *end + 10 > m.size()) return std::nullopt;
      const uint16_t type = ReadU16(m.data() + *end);
      const uint32_t ttl = ReadU32(m.data() + *end + 4);
      const uint16_t rdlength = ReadU16(m.data() + *end + 8);
      const size_t rdata = *end + 10;
      if (rdata + rdlength > m.size()) return std::nullopt;
      if (type == kTypeOpt) {
        walk.opt_rdlength_at = section == 2 && rdata + rdlength == m.size() ? *end + 8 : 0;
      } else {
        walk.opt_rdlength_at = 0;  // a record after the OPT: it is not the last
        walk.ttl_offsets.push_back(static_cast<uint16_t>(*end + 4));
        walk.min_ttl = std::min(walk.min_ttl, ttl);
        if (section == 1 && type == kTypeSoa && rdlength >= 4) {
          walk.negative_ttl = std::min(ttl, ReadU32(m.data() + rdata + rdlength - 4));
        }
      }
      at = rdata + rdlength;
    }
  }
  if (at != m.size()) walk.opt_rdlength_at = 0;
  return walk;
}

}  // namespace

bool DnsCache::MakeKey(absl::Span<const uint8_t> query, size_t qname_bytes, std::string& key) {
  if (query.size() < kHeaderBytes || ReadU16(query.data() + 4) != 1) return false;
  if ((query[2] & 0x78) != 0) return false;  // opcode QUERY only (RFC 1035 §4.1.1)
  if (ReadU16(query.data() + 6) != 0 || ReadU16(query.data() + 8) != 0) return false;
  key.assign(reinterpret_cast<const char*>(query.data()) + 2, query.size() - 2);
  // The QNAME starts at offset 10 of the key (12 of the message); lowercase its letters
  // (length bytes are <= 63, never letters).
  for (size_t i = 10; i < 10 + qname_bytes && i < key.size(); ++i) {
    key[i] = static_cast<char>(LowerAscii(static_cast<uint8_t>(key[i])));
  }
  return true;
}

template <typename TtlFn>
bool DnsCache::Append(const Entry& entry, absl::Span<const uint8_t> query, size_t qname_bytes,
                      TtlFn ttl, absl::Span<const uint8_t> option, OutputBuffer& out) {
  const std::vector<uint8_t>& response = entry.response;
  if (entry.opt_rdlength_at == 0 || response.size() + option.size() > kMaxMessageBytes ||
      ReadU16(response.data() + entry.opt_rdlength_at) + option.size() > 0xffff) {
    option = {};
  }
  const size_t size = response.size() + option.size();
  absl::Span<uint8_t> tail = out.WritableTail();
  if (tail.size() < kLengthPrefixBytes + size) return false;
  uint8_t* p = tail.data();
  WriteU16(p, static_cast<uint16_t>(size));
  p += kLengthPrefixBytes;
  std::memcpy(p, response.data(), response.size());
  if (!option.empty()) {
    // The OPT ends the message: the option goes at its end, and RDLENGTH grows by it. ARCOUNT
    // stays (still one OPT).
    std::memcpy(p + response.size(), option.data(), option.size());
    uint8_t* rdlength = p + entry.opt_rdlength_at;
    WriteU16(rdlength, static_cast<uint16_t>(ReadU16(rdlength) + option.size()));
  }
  std::memcpy(p, query.data(), 2);  // the client's ID
  // The client's spelling of the name (the response echoes the question, RFC 1035 §7.3).
  std::memcpy(p + kHeaderBytes, query.data() + kHeaderBytes, qname_bytes);
  for (uint16_t offset : entry.ttl_offsets) WriteU32(p + offset, ttl(ReadU32(p + offset)));
  out.CommitMessage(kLengthPrefixBytes + size);
  return true;
}

void DnsCache::Erase(List::iterator entry) {
  map_.erase(absl::string_view(entry->key));
  lru_.erase(entry);
}

bool DnsCache::Answer(absl::string_view key, absl::Span<const uint8_t> query, size_t qname_bytes,
                      absl::Time now, OutputBuffer& out) {
  auto found = map_.find(key);
  if (found == map_.end()) return false;
  List::iterator entry = found->second;
  if (now >= entry->expires) {
    // Kept for AnswerStale within the stale window; a fresh answer replaces it on Insert.
    if (now >= entry->expires + absl::Seconds(config_.serve_stale_seconds)) Erase(entry);
    return false;
  }
  const uint32_t age = static_cast<uint32_t>(absl::ToInt64Seconds(now - entry->stored));
  const auto aged = [age](uint32_t ttl) { return ttl > age ? ttl - age : 0; };
  if (!Append(*entry, query, qname_bytes, aged, {}, out)) return false;
  lru_.splice(lru_.begin(), lru_, entry);
  return true;
}

bool DnsCache::AnswerStale(absl::string_view key, absl::Span<const uint8_t> query,
                           size_t qname_bytes, absl::Time now, OutputBuffer& out) {
  auto found = map_.find(key);
  if (found == map_.end()) return false;
  List::iterator entry = found->second;
  if (now < entry->expires) return false;
  if (now >= entry->expires + absl::Seconds(config_.serve_stale_seconds)) {
    Erase(entry);
    return false;
  }
  const auto stale = [](uint32_t) { return kStaleTtl; };  // RFC 8767 §4
  // RFC 8914 §4.4: EDE INFO-CODE 3 "Stale Answer", no EXTRA-TEXT.
  constexpr uint8_t kStaleAnswerEde[] = {0, kOptionEde, 0, 2, 0, kEdeStaleAnswer};
  if (!Append(*entry, query, qname_bytes, stale, kStaleAnswerEde, out)) return false;
  lru_.splice(lru_.begin(), lru_, entry);
  return true;
}

const DnsCache::Entry* DnsCache::FindStale(absl::string_view key, absl::Time now) const {
  if (config_.serve_stale_seconds == 0) return nullptr;  // no lookup on the miss path
  auto found = map_.find(key);
  if (found == map_.end()) return nullptr;
  const Entry& entry = *found->second;
  if (now < entry.expires || now >= entry.expires + absl::Seconds(config_.serve_stale_seconds)) {
    return nullptr;
  }
  return &entry;
}

bool DnsCache::HasStale(absl::string_view key, absl::Time now) const {
  return FindStale(key, now) != nullptr;
}

void DnsCache::NoteRefreshFailed(absl::string_view key, absl::Time now) {
  if (FindStale(key, now) == nullptr) return;
  map_.find(key)->second->refresh_failed_until = now + absl::Seconds(config_.stale_refresh_seconds);
}

bool DnsCache::RefreshFailedRecently(absl::string_view key, absl::Time now) const {
  const Entry* entry = FindStale(key, now);
  return entry != nullptr && now < entry->refresh_failed_until;
}

void DnsCache::Insert(absl::string_view key, absl::Span<const uint8_t> response, absl::Time now) {
  if (!enabled() || response.size() < kHeaderBytes || response.size() > config_.max_answer_bytes) {
    return;
  }
  if (response[2] & 0x02) return;  // TC=1: not the whole answer
  const uint16_t rcode = response[3] & kRcodeMask;
  if (rcode != kRcodeNoError && rcode != kRcodeNxDomain) return;
  std::optional<Walk> walk = WalkResponse(response);
  if (!walk.has_value()) return;
  const bool negative = rcode == kRcodeNxDomain || ReadU16(response.data() + 6) == 0;
  uint32_t ttl;
  if (negative) {
    if (!walk->negative_ttl.has_value()) return;  // RFC 2308 §5: no SOA, no negative caching
    ttl = std::min(*walk->negative_ttl, config_.max_negative_ttl);
  } else {
    ttl = std::min(walk->min_ttl, config_.max_ttl);
  }
  if (ttl == 0) return;
  if (auto old = map_.find(key); old != map_.end()) Erase(old->second);
  while (map_.size() >= config_.entries && !lru_.empty()) Erase(std::prev(lru_.end()));
  lru_.push_front(Entry{std::string(key), std::vector<uint8_t>(response.begin(), response.end()),
                        std::move(walk->ttl_offsets), static_cast<uint16_t>(walk->opt_rdlength_at),
                        now, now + absl::Seconds(ttl)});
  map_.emplace(absl::string_view(lru_.front().key), lru_.begin());
}

}  // namespace onepass::dns
