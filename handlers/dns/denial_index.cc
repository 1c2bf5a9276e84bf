#include "handlers/dns/denial_index.h"

#include <openssl/sha.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_snapshot.h"

namespace onepass::dns {
namespace {

// Offsets of the labels of a wire name, first label first; returns the count (no root).
int LabelOffsets(absl::string_view name, uint8_t (&offsets)[128]) {
  int count = 0;
  for (size_t pos = 0; pos < name.size() && name[pos] != 0 && count < 128;
       pos += 1 + static_cast<uint8_t>(name[pos])) {
    offsets[count++] = static_cast<uint8_t>(pos);
  }
  return count;
}

// NSEC3PARAM and NSEC3 both start with algorithm, flags, iterations, salt length, salt
// (RFC 5155 §3.2, §4.2). Returns false if `rdata` is too short.
bool ReadParams(absl::string_view rdata, Nsec3Params& params, uint8_t& flags) {
  if (rdata.size() < 5) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(rdata.data());
  const size_t salt_size = p[4];
  if (rdata.size() < 5 + salt_size) return false;
  params.algorithm = p[0];
  flags = p[1];
  params.iterations = ReadU16(p + 2);
  params.salt.assign(rdata.data() + 5, salt_size);
  return true;
}

bool SameParams(const Nsec3Params& a, const Nsec3Params& b) {
  return a.algorithm == b.algorithm && a.iterations == b.iterations && a.salt == b.salt;
}

// True if `name` lies strictly below a zone cut of the zone (glue or occluded data): such
// names are not part of the authoritative data and have no NSEC3 (RFC 5155 §7.1).
bool BelowCut(absl::string_view origin, absl::string_view name, const NodeMap& nodes) {
  if (name.size() <= origin.size()) return false;
  for (absl::string_view up = Parent(name); up.size() > origin.size(); up = Parent(up)) {
    auto it = nodes.find(up);
    if (it != nodes.end() && it->second.Find(kTypeNs) != nullptr) return true;
  }
  return false;
}

}  // namespace

bool CanonicalLess(absl::string_view a, absl::string_view b) {
  uint8_t a_offsets[128];
  uint8_t b_offsets[128];
  int i = LabelOffsets(a, a_offsets);
  int j = LabelOffsets(b, b_offsets);
  while (i > 0 && j > 0) {
    --i;
    --j;
    const auto* la = reinterpret_cast<const uint8_t*>(a.data()) + a_offsets[i];
    const auto* lb = reinterpret_cast<const uint8_t*>(b.data()) + b_offsets[j];
    const int common = std::min(la[0], lb[0]);
    const int c = std::memcmp(la + 1, lb + 1, common);
    if (c != 0) return c < 0;
    if (la[0] != lb[0]) return la[0] < lb[0];
  }
  return i < j;  // fewer labels left: an ancestor sorts first
}

void Nsec3Hash(const Nsec3Params& params, absl::string_view name, uint8_t (&out)[kNsec3HashBytes]) {
  // RFC 5155 §5: IH(salt, x, 0) = H(x || salt); IH(salt, x, k) = H(IH(salt, x, k-1) || salt).
  uint8_t buffer[kMaxNameBytes + 255];
  std::memcpy(buffer, name.data(), name.size());
  std::memcpy(buffer + name.size(), params.salt.data(), params.salt.size());
  SHA1(buffer, name.size() + params.salt.size(), out);
  for (uint16_t k = 0; k < params.iterations; ++k) {
    std::memcpy(buffer, out, kNsec3HashBytes);
    std::memcpy(buffer + kNsec3HashBytes, params.salt.data(), params.salt.size());
    SHA1(buffer, kNsec3HashBytes + params.salt.size(), out);
  }
}

std::optional<std::string> DecodeBase32Hex(absl::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    const char lower = static_cast<char>(LowerAscii(static_cast<uint8_t>(c)));
    uint32_t value;
    if (lower >= '0' && lower <= '9') {
      value = static_cast<uint32_t>(lower - '0');
    } else if (lower >= 'a' && lower <= 'v') {
      value = static_cast<uint32_t>(lower - 'a' + 10);
    } else {
      return std::nullopt;
    }
    bits = (bits << 5) | value;
    count += 5;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return out;
}

uint64_t DenialIndex::HashPrefix(absl::string_view hash) {
  uint64_t prefix = 0;
  for (size_t i = 0; i < 8; ++i) {
    prefix = (prefix << 8) | (i < hash.size() ? static_cast<uint8_t>(hash[i]) : 0);
  }
  return prefix;
}

void DenialIndex::Build(absl::string_view origin, NodeMap& nodes, const NodeMap& nsec3_nodes) {
  for (const auto& [owner, node] : nodes) {
    if (const RRset* nsec = node.Find(kTypeNsec)) nsec_.push_back(NsecEntry{owner, nsec});
  }
  std::sort(nsec_.begin(), nsec_.end(),
            [](const NsecEntry& a, const NsecEntry& b) { return CanonicalLess(a.owner, b.owner); });

  // RFC 5155 §4: the chain the NSEC3PARAM names; only flags 0 is usable by a server (§4.1.2).
  const Node& apex = nodes.at(origin);
  const RRset* param = apex.Find(kTypeNsec3param);
  if (param == nullptr) return;
  bool found = false;
  for (const Record& record : param->records) {
    uint8_t flags = 0;
    if (ReadParams(record.rdata, nsec3_params_, flags) && flags == 0 &&
        nsec3_params_.algorithm == 1) {
      found = true;
      break;
    }
  }
  if (!found) return;
  for (const auto& [owner, node] : nsec3_nodes) {
    const RRset* nsec3 = node.Find(kTypeNsec3);
    if (nsec3 == nullptr) continue;
    bool matches = false;
    for (const Record& record : nsec3->records) {
      Nsec3Params params;
      uint8_t flags = 0;
      if (ReadParams(record.rdata, params, flags) && SameParams(params, nsec3_params_)) {
        matches = true;
      }
    }
    if (!matches) continue;
    std::optional<std::string> hash =
        DecodeBase32Hex(absl::string_view(owner).substr(1, static_cast<uint8_t>(owner[0])));
    if (!hash.has_value() || hash->size() != kNsec3HashBytes) continue;
    nsec3_chain_.push_back(Nsec3Entry{*std::move(hash), owner, nsec3});
  }
  std::sort(nsec3_chain_.begin(), nsec3_chain_.end(),
            [](const Nsec3Entry& a, const Nsec3Entry& b) { return a.hash < b.hash; });
  if (nsec3_chain_.empty()) return;
  hash_prefixes_.reserve(nsec3_chain_.size());
  for (const Nsec3Entry& entry : nsec3_chain_) hash_prefixes_.push_back(HashPrefix(entry.hash));

  // Every authoritative name, empty non-terminals included, hashed now (NSD's prehash).
  char wildcard[kMaxNameBytes + 2];
  for (auto& [owner, node] : nodes) {
    if (BelowCut(origin, owner, nodes)) continue;
    node.nsec3 = FindNsec3(owner, node.nsec3_exact);
    // The wildcard's hash serves the closest encloser of an NXDOMAIN (RFC 5155 §7.2.2), which
    // a delegation never is (below it is a referral): in a TLD, half the hashing saved.
    const bool delegation = owner != origin && node.Find(kTypeNs) != nullptr;
    if (!delegation && owner.size() + 2 <= kMaxNameBytes) {
      wildcard[0] = 1;
      wildcard[1] = '*';
      std::memcpy(wildcard + 2, owner.data(), owner.size());
      bool exact = false;
      node.nsec3_wildcard = FindNsec3(absl::string_view(wildcard, owner.size() + 2), exact);
    }
  }
}

const DenialIndex::NsecEntry* DenialIndex::CoveringNsec(absl::string_view name) const {
  auto it = std::upper_bound(
      nsec_.begin(), nsec_.end(), name,
      [](absl::string_view n, const NsecEntry& entry) { return CanonicalLess(n, entry.owner); });
  return it == nsec_.begin() ? nullptr : &*std::prev(it);
}

int32_t DenialIndex::FindNsec3(absl::string_view name, bool& exact) const {
  exact = false;
  if (nsec3_chain_.empty()) return -1;
  uint8_t hash[kNsec3HashBytes];
  Nsec3Hash(nsec3_params_, name, hash);
  return FindNsec3Hash(absl::string_view(reinterpret_cast<const char*>(hash), sizeof(hash)), exact);
}

int32_t DenialIndex::FindNsec3Hash(absl::string_view hash, bool& exact) const {
  // The first entry above `hash`: every entry whose prefix is below `hash`'s is below it,
  // every one whose prefix is above is above; the few with an equal prefix are compared whole.
  const uint64_t prefix = HashPrefix(hash);
  // SHA-1 output is uniform, so the prefix's share of 2^64 is about its place in the chain:
  // start there and widen the bracket by doubling steps until it holds every equal prefix
  // (a few steps, where a binary search over a 1M chain takes 20 cache misses; 2 per name at
  // load). Any order of hashes is still found: the widening ends at the chain's ends.
  const size_t n = hash_prefixes_.size();
  const size_t guess = static_cast<size_t>((static_cast<unsigned __int128>(prefix) * n) >> 64);
  size_t low = guess;  // hash_prefixes_[low] < prefix, or low == 0
  for (size_t step = 1; low > 0 && hash_prefixes_[low] >= prefix; step <<= 1) {
    low = low > step ? low - step : 0;
  }
  size_t high = guess;  // hash_prefixes_[high] > prefix, or high == n
  for (size_t step = 1; high < n && hash_prefixes_[high] <= prefix; step <<= 1) {
    high = n - high > step ? high + step : n;
  }
  const auto equal =
      std::equal_range(hash_prefixes_.begin() + static_cast<ptrdiff_t>(low),
                       hash_prefixes_.begin() + static_cast<ptrdiff_t>(high), prefix);
  size_t above = static_cast<size_t>(equal.first - hash_prefixes_.begin());
  const size_t end = static_cast<size_t>(equal.second - hash_prefixes_.begin());
  while (above < end && !(hash < nsec3_chain_[above].hash)) ++above;
  // Before the first hash: the last NSEC3 covers it, its next hash wrapping around
  // (RFC 5155 §3.1.7).
  if (above == 0) return static_cast<int32_t>(nsec3_chain_.size() - 1);
  const size_t at = above - 1;
  // The entry itself only when the prefixes tie: most names (wildcards, names without an
  // NSEC3 of their own) are covered, and then its heap-held hash is never read.
  exact = hash_prefixes_[at] == prefix && nsec3_chain_[at].hash == hash;
  return static_cast<int32_t>(at);
}

}  // namespace onepass::dns
