// The immutable data the DNS responder reads: every loaded zone, indexed for lookups.
//
// Built once at startup (zone_loader.h) and shared read-only by every worker through
// std::shared_ptr<const ZoneSnapshot>; a later reload builds a new snapshot and swaps the
// pointer, so nothing here is ever mutated after construction and no lock is needed.
#ifndef ONEPASS_HANDLERS_DNS_ZONE_SNAPSHOT_H_
#define ONEPASS_HANDLERS_DNS_ZONE_SNAPSHOT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "handlers/dns/denial_index.h"
#include "handlers/dns/rrset_store.h"
#include "handlers/dns/zone_records.h"

namespace onepass::dns {

// The RRSIG of a zone that expires first (RFC 4034 §3.1.5), for the load-time report.
struct SignatureExpiry {
  uint32_t expiration = 0;  // seconds since the epoch, as in the RDATA
  std::string owner;        // canonical
  uint16_t type_covered = 0;
};

// What a zone's own structures take [bytes], for the load report: the node table's slots,
// the RRsets (the records inside them included, their blocks when they have several not),
// and the arena of owner names and RDATA.
struct ZoneMemory {
  size_t node_table_bytes = 0;
  size_t rrsets = 0;
  size_t rrset_bytes = 0;
  size_t shared_hits = 0;
  size_t arena_bytes = 0;
};

class Zone {
 public:
  // `nsec3_nodes`: the owners that hold only NSEC3 (and their RRSIGs), kept out of `nodes`
  // because they are not names of the zone's namespace (RFC 5155 §7.2.8: a query for one is
  // answered as for any name that does not exist).
  // The keys of `nodes` and `nsec3_nodes` and the records' bytes are views into `names`, and
  // the nodes' RRsets live in `rrsets`; the zone keeps both.
  Zone(std::string origin, NameArena names, RRsetStore rrsets, NodeMap nodes,
       NodeMap nsec3_nodes = {});
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
  // The SOA serial (RFC 1035 §3.3.13), or nullopt if the SOA RDATA is malformed.
  std::optional<uint32_t> serial() const;
  const RRset* apex_ns() const { return apex_ns_; }
  // The SOA as put in the authority section of negative answers: TTL = min(SOA TTL, SOA
  // MINIMUM) (RFC 2308 §3).
  const RRset& negative_soa() const { return negative_soa_; }
  size_t node_count() const { return nodes_.size(); }
  const NodeMap& nodes() const { return nodes_; }
  ZoneMemory Memory() const;

  // The deepest existing node at or above `name` (which must be in the zone): the closest
  // encloser of RFC 4592 §3.3.1. Returns its name, a suffix of `name`.
  absl::string_view ClosestEncloser(absl::string_view name) const;

  // The highest node strictly below the apex, at or above `name`, that owns an NS RRset: the
  // zone cut that `name` falls under (RFC 1034 §4.3.2 step 3b), or empty when none.
  absl::string_view FindDelegation(absl::string_view name) const;

  // Signed: the apex has RRSIGs (NSD's zone_is_secure). Only then does a DO query get
  // signatures and denial proofs.
  bool secure() const { return secure_; }
  const DenialIndex& denial() const { return denial_; }
  const NodeMap& nsec3_nodes() const { return nsec3_nodes_; }
  // The earliest signature expiration, or nullopt for an unsigned zone. Compared as plain
  // 32-bit times (the serial arithmetic of RFC 4034 §3.1.5 matters only past 2106).
  const std::optional<SignatureExpiry>& earliest_expiry() const { return earliest_expiry_; }

 private:
  std::string origin_;
  NameArena names_;    // before the maps whose keys point into it
  RRsetStore rrsets_;  // likewise for the nodes' RRsets
  NodeMap nodes_;
  NodeMap nsec3_nodes_;
  bool secure_ = false;
  DenialIndex denial_;
  std::optional<SignatureExpiry> earliest_expiry_;
  // The SOA's RRSIGs with the SOA's TTL, and with the negative SOA's (NSD, its bug #542).
  std::vector<Record> soa_signatures_;
  std::vector<Record> negative_soa_signatures_;
  const Node* apex_ = nullptr;
  const RRset* apex_ns_ = nullptr;
  RRset negative_soa_;
};

class ZoneSnapshot {
 public:
  // Zones must have distinct origins (the loader checks).
  explicit ZoneSnapshot(std::vector<std::unique_ptr<Zone>> zones);
  // Frees the zones, then returns the freed pages to the kernel (malloc_trim): after a reload
  // the old data's memory would otherwise stay resident in the allocator's free lists. Runs on
  // whichever thread lets go of the snapshot last (a worker, after a reload): a few ms once.
  ~ZoneSnapshot();
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
