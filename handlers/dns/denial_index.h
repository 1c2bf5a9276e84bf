// What a signed zone needs to prove that something does not exist, built once at load:
// its NSEC owners in canonical order (RFC 4034 §6.1) and its NSEC3 chain sorted by hash
// (RFC 5155 §7.2), with every name of the zone hashed in advance so that a query hashes at
// most the one name RFC 5155 §7.2.1 needs (the next closer name of an NXDOMAIN).
//
// Which records make up each proof follows NSD (query.c, nsec3.c); the planner picks them
// (answer_plan.cc), this file only finds them.
#ifndef ONEPASS_HANDLERS_DNS_DENIAL_INDEX_H_
#define ONEPASS_HANDLERS_DNS_DENIAL_INDEX_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "common/huge_pages.h"

namespace onepass::dns {

struct Node;
struct RRset;

// Canonical owner name (a view into the zone's NameArena, zone_snapshot.h) to node.
// Its slot array, at millions of names, in huge-page memory (common/huge_pages.h): a random
// lookup on a 10M-name zone cost 1.46x one on 1M names with 4 KiB pages.
using NodeMap = absl::flat_hash_map<absl::string_view, Node,
                                    absl::container_internal::hash_default_hash<absl::string_view>,
                                    absl::container_internal::hash_default_eq<absl::string_view>,
                                    HugePageAllocator<std::pair<const absl::string_view, Node>>>;

// RFC 4034 §6.1 canonical order of two canonical (lowercase) wire names: label by label from
// the root, each label compared as unsigned octets, a missing label sorting first.
bool CanonicalLess(absl::string_view a, absl::string_view b);

// The hash parameters of an NSEC3 chain (RFC 5155 §4.1: NSEC3PARAM).
struct Nsec3Params {
  uint8_t algorithm = 1;  // SHA-1, the only one defined (RFC 5155 §11)
  uint16_t iterations = 0;
  std::string salt;
};

inline constexpr size_t kNsec3HashBytes = 20;  // SHA-1

// RFC 5155 §5: IH(salt, name, iterations) of a canonical wire name. No allocation.
void Nsec3Hash(const Nsec3Params& params, absl::string_view name, uint8_t (&out)[kNsec3HashBytes]);

// RFC 4648 §7 (base32hex, no padding, case-insensitive) decoding of an NSEC3 owner's first
// label; nullopt if it is not valid base32hex.
std::optional<std::string> DecodeBase32Hex(absl::string_view text);

class DenialIndex {
 public:
  struct NsecEntry {
    absl::string_view owner;  // a key of the zone's nodes
    const RRset* rrset;
  };
  struct Nsec3Entry {
    std::string hash;         // raw, from the owner's first label
    absl::string_view owner;  // a key of the zone's NSEC3 nodes
    const RRset* rrset;
  };

  // Indexes a zone: `nodes` is its namespace (their nsec3 fields are filled here),
  // `nsec3_nodes` the NSEC3 owners. The index points into both maps, which must not change
  // afterwards (the Zone owns all three).
  void Build(absl::string_view origin, NodeMap& nodes, const NodeMap& nsec3_nodes);

  // The NSEC RRset at the last owner at or before `name` in canonical order: the one that
  // matches or covers `name` (NSD's find_covering_nsec). nullptr if the zone has no NSEC
  // there.
  const NsecEntry* CoveringNsec(absl::string_view name) const;

  // True when the zone has an NSEC3PARAM and NSEC3 records with its parameters: denial then
  // uses NSEC3 only (NSD's choice when a zone has both).
  bool has_nsec3() const { return !nsec3_chain_.empty(); }
  const Nsec3Params& nsec3_params() const { return nsec3_params_; }
  const Nsec3Entry& nsec3(int32_t index) const { return nsec3_chain_[index]; }
  size_t nsec3_count() const { return nsec3_chain_.size(); }
  // Hashes `name` and returns its NSEC3: the matching one (`exact`), or else the covering
  // one (the last hash before it, wrapping around to the last of the chain). -1 without a
  // chain. This is the one hash a query may compute.
  int32_t FindNsec3(absl::string_view name, bool& exact) const;

 private:
  int32_t FindNsec3Hash(absl::string_view hash, bool& exact) const;
  // The first 8 octets of a hash, big-endian: ordered as the hashes are (a shorter one
  // padded with zeros, which only ties).
  static uint64_t HashPrefix(absl::string_view hash);

  std::vector<NsecEntry> nsec_;  // canonical order
  Nsec3Params nsec3_params_;
  std::vector<Nsec3Entry> nsec3_chain_;  // by hash
  // HashPrefix of each chain entry: the binary search runs over these, in one block, rather
  // than over the entries' heap-held hashes (a cache miss per step; 2 per name at load).
  std::vector<uint64_t> hash_prefixes_;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DENIAL_INDEX_H_
