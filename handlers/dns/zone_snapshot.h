// The immutable data the DNS responder reads: every loaded zone, indexed for lookups.
//
// Built once at startup (zone_loader.h) and shared read-only by every worker through
// std::shared_ptr<const ZoneSnapshot>; a later reload builds a new snapshot and swaps the
// pointer, so nothing here is ever mutated after construction and no lock is needed.
#ifndef ONEPASS_HANDLERS_DNS_ZONE_SNAPSHOT_H_
#define ONEPASS_HANDLERS_DNS_ZONE_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace onepass::dns {

// One resource record's data in wire form, ready to copy into a response.
struct Record {
  uint32_t ttl = 0;
  // Uncompressed RDATA.
  std::string rdata;
  // Offsets in `rdata` of names that may be compressed in responses: only the RFC 1035 types
  // (RFC 3597 §4: NS, CNAME, SOA, PTR, MX, ...); never SRV (RFC 2782) or newer types.
  uint16_t compressible_offsets[2] = {0, 0};
  uint8_t compressible_count = 0;
  // Canonical name this record points at, for CNAME chasing and additional-section
  // processing (NS, CNAME, MX exchange, SRV target); empty for other types.
  std::string target;
};

// All records of one type at one owner name (RFC 2181 §5).
struct RRset {
  uint16_t type = 0;
  std::vector<Record> records;
};

// One owner name in a zone. Empty non-terminals exist as nodes without RRsets (RFC 4592 §2.2.2)
// so that they block wildcards and answer NODATA.
struct Node {
  // In the order each type first appears in the zone file (NSD keeps the same order; it
  // decides which RRset answers QTYPE=ANY, RFC 8482 §4.1).
  std::vector<RRset> rrsets;

  const RRset* Find(uint16_t type) const {
    for (const RRset& rrset : rrsets) {
      if (rrset.type == type) return &rrset;
    }
    return nullptr;
  }
};

class Zone {
 public:
  Zone(std::string origin, absl::flat_hash_map<std::string, Node> nodes);
  Zone(const Zone&) = delete;
  Zone& operator=(const Zone&) = delete;

  // Canonical wire name of the apex.
  const std::string& origin() const { return origin_; }
  // The node at `name` (canonical), or nullptr. Empty non-terminals are nodes.
  const Node* FindNode(absl::string_view name) const {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? nullptr : &it->second;
  }
  const Node& apex() const { return *apex_; }
  const RRset* apex_ns() const { return apex_ns_; }
  // The SOA as put in the authority section of negative answers: TTL = min(SOA TTL, SOA
  // MINIMUM) (RFC 2308 §3).
  const RRset& negative_soa() const { return negative_soa_; }
  size_t node_count() const { return nodes_.size(); }
  const absl::flat_hash_map<std::string, Node>& nodes() const { return nodes_; }

  // The deepest existing node at or above `name` (which must be in the zone): the closest
  // encloser of RFC 4592 §3.3.1. Returns its name, a suffix of `name`.
  absl::string_view ClosestEncloser(absl::string_view name) const;

  // The highest node strictly below the apex, at or above `name`, that owns an NS RRset: the
  // zone cut that `name` falls under (RFC 1034 §4.3.2 step 3b), or empty when none.
  absl::string_view FindDelegation(absl::string_view name) const;

 private:
  std::string origin_;
  absl::flat_hash_map<std::string, Node> nodes_;
  const Node* apex_ = nullptr;
  const RRset* apex_ns_ = nullptr;
  RRset negative_soa_;
};

class ZoneSnapshot {
 public:
  // Zones must have distinct origins (the loader checks).
  explicit ZoneSnapshot(std::vector<std::unique_ptr<Zone>> zones);
  ZoneSnapshot(const ZoneSnapshot&) = delete;
  ZoneSnapshot& operator=(const ZoneSnapshot&) = delete;

  // The zone with the longest origin that is `name` or an ancestor of it, or nullptr.
  const Zone* FindZone(absl::string_view name) const;

  const std::vector<std::unique_ptr<Zone>>& zones() const { return zones_; }

 private:
  std::vector<std::unique_ptr<Zone>> zones_;
  absl::flat_hash_map<std::string, const Zone*> by_origin_;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_ZONE_SNAPSHOT_H_
