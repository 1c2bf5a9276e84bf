#include "handlers/dns/zone_snapshot.h"

#include <algorithm>
#include <utility>

#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

Zone::Zone(std::string origin, absl::flat_hash_map<std::string, Node> nodes)
    : origin_(std::move(origin)), nodes_(std::move(nodes)) {
  // The loader guarantees the apex node and its SOA exist.
  apex_ = &nodes_.at(origin_);
  apex_ns_ = apex_->Find(kTypeNs);
  const RRset* soa = apex_->Find(kTypeSoa);
  negative_soa_ = *soa;
  for (Record& record : negative_soa_.records) {
    // SOA RDATA ends with MINIMUM (RFC 1035 §3.3.13).
    const uint32_t minimum =
        ReadU32(reinterpret_cast<const uint8_t*>(record.rdata.data()) + record.rdata.size() - 4);
    record.ttl = std::min(record.ttl, minimum);
  }
}

absl::string_view Zone::ClosestEncloser(absl::string_view name) const {
  while (name.size() > origin_.size() && !nodes_.contains(name)) name = Parent(name);
  return name;
}

absl::string_view Zone::FindDelegation(absl::string_view name) const {
  absl::string_view cut;
  while (name.size() > origin_.size()) {
    const Node* node = FindNode(name);
    if (node != nullptr && node->Find(kTypeNs) != nullptr) cut = name;
    name = Parent(name);
  }
  return cut;
}

ZoneSnapshot::ZoneSnapshot(std::vector<std::unique_ptr<Zone>> zones) : zones_(std::move(zones)) {
  for (const auto& zone : zones_) by_origin_.emplace(zone->origin(), zone.get());
}

const Zone* ZoneSnapshot::FindZone(absl::string_view name) const {
  while (true) {
    auto it = by_origin_.find(name);
    if (it != by_origin_.end()) return it->second;
    if (IsRoot(name)) return nullptr;
    name = Parent(name);
  }
}

}  // namespace onepass::dns
