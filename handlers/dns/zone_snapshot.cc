#include "handlers/dns/zone_snapshot.h"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/huge_pages.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

namespace {

// Notes the earliest RRSIG expiration at `owner` (RFC 4034 §3.1: Type Covered 2, Algorithm
// 1, Labels 1, Original TTL 4, then Signature Expiration 4 octets).
void NoteExpiry(absl::string_view owner, const Node& node,
                std::optional<SignatureExpiry>& earliest) {
  const RRset* rrsigs = node.Find(kTypeRrsig);
  if (rrsigs == nullptr) return;
  for (const Record& rrsig : rrsigs->records) {
    if (rrsig.rdata.size() < 12) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(rrsig.rdata.data());
    const uint32_t expiration = ReadU32(p + 8);
    if (!earliest.has_value() || expiration < earliest->expiration) {
      earliest = SignatureExpiry{expiration, std::string(owner), ReadU16(p)};
    }
  }
}

// Points each RRset at the RRSIGs that cover it (RFC 4034 §3.1.1: Type Covered, the first two
// octets of the RDATA), so answers can add them without searching. A shared RRset gets a
// private copy first: its signatures are this owner's alone.
void AttachSignatures(Node& node, RRsetStore& store) {
  const RRset* rrsigs = node.Find(kTypeRrsig);
  if (rrsigs == nullptr) return;
  // Only the other RRsets' signature lists grow: `rrsigs` stays valid.
  for (const Record& rrsig : rrsigs->records) {
    if (rrsig.rdata.size() < 2) continue;
    const uint16_t covered = ReadU16(reinterpret_cast<const uint8_t*>(rrsig.rdata.data()));
    for (RRset*& rrset : node.rrsets) {
      if (rrset->type != covered || covered == kTypeRrsig) continue;
      if (rrset->shared) rrset = store.Unshare(rrset);
      rrset->signatures.push_back(&rrsig);
    }
  }
}

}  // namespace

void NameArena::FreeBlock::operator()(char* block) const {
  if (huge) {
    FreeHugePageable(block);
  } else {
    delete[] block;
  }
}

absl::string_view NameArena::Intern(absl::string_view name) {
  if (name.empty()) return {};
  if (used_ + name.size() > block_bytes_) {
    const bool huge = blocks_.size() >= kSmallBlocks;
    block_bytes_ = std::max(huge ? kHugePageBytes : kSmallBlockBytes, name.size());
    char* block =
        huge ? static_cast<char*>(AllocateHugePageable(block_bytes_)) : new char[block_bytes_];
    blocks_.emplace_back(block, FreeBlock{huge});
    allocated_ += block_bytes_;
    used_ = 0;
  }
  char* at = blocks_.back().get() + used_;
  std::memcpy(at, name.data(), name.size());
  used_ += name.size();
  return absl::string_view(at, name.size());
}

Zone::Zone(std::string origin, NameArena names, RRsetStore rrsets, NodeMap nodes,
           NodeMap nsec3_nodes)
    : origin_(std::move(origin)),
      names_(std::move(names)),
      rrsets_(std::move(rrsets)),
      nodes_(std::move(nodes)),
      nsec3_nodes_(std::move(nsec3_nodes)) {
  for (auto* map : {&nodes_, &nsec3_nodes_}) {
    for (auto& [owner, node] : *map) {
      AttachSignatures(node, rrsets_);
      NoteExpiry(owner, node, earliest_expiry_);
    }
  }
  // The loader guarantees the apex node and its SOA exist.
  apex_ = &nodes_.at(origin_);
  secure_ = apex_->Find(kTypeRrsig) != nullptr;
  apex_ns_ = apex_->Find(kTypeNs);
  RRset* soa = nullptr;
  for (RRset* rrset : nodes_.at(origin_).rrsets) {
    if (rrset->type == kTypeSoa) soa = rrset;  // never shared (not RRsetStore::Sharable)
  }
  // NSD sends an SOA's RRSIGs with the SOA's TTL (its bug #542): owned copies.
  for (const Record* rrsig : soa->signatures) soa_signatures_.push_back(*rrsig);
  for (Record& rrsig : soa_signatures_) rrsig.ttl = soa->records.front().ttl;
  soa->signatures.clear();
  for (const Record& rrsig : soa_signatures_) soa->signatures.push_back(&rrsig);
  negative_soa_ = *soa;
  for (Record& record : negative_soa_.records) {
    // SOA RDATA ends with MINIMUM (RFC 1035 §3.3.13).
    const uint32_t minimum =
        ReadU32(reinterpret_cast<const uint8_t*>(record.rdata.data()) + record.rdata.size() - 4);
    record.ttl = std::min(record.ttl, minimum);
  }
  // Likewise in negative answers: the signature expires from caches with the SOA it covers.
  negative_soa_signatures_ = soa_signatures_;
  for (Record& rrsig : negative_soa_signatures_) rrsig.ttl = negative_soa_.records.front().ttl;
  negative_soa_.signatures.clear();
  for (const Record& rrsig : negative_soa_signatures_) negative_soa_.signatures.push_back(&rrsig);
  denial_.Build(origin_, nodes_, nsec3_nodes_);
  rrsets_.FinishLoading();
}

ZoneMemory Zone::Memory() const {
  ZoneMemory memory;
  // A slot per capacity, plus one control byte each (absl's SwissTable).
  for (const NodeMap* map : {&nodes_, &nsec3_nodes_}) {
    memory.node_table_bytes += map->capacity() * (sizeof(NodeMap::value_type) + 1);
  }
  memory.rrsets = rrsets_.live();
  memory.rrset_bytes = rrsets_.allocated() * sizeof(RRset);
  memory.shared_hits = rrsets_.shared_hits();
  memory.arena_bytes = names_.allocated();
  return memory;
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

std::optional<uint32_t> Zone::serial() const {
  const RRset* soa = apex_->Find(kTypeSoa);
  if (soa == nullptr || soa->records.empty()) return std::nullopt;
  // MNAME and RNAME (uncompressed), then SERIAL.
  const absl::string_view rdata = soa->records.front().rdata;
  size_t pos = 0;
  for (int name = 0; name < 2; ++name) {
    while (pos < rdata.size() && rdata[pos] != 0) pos += 1 + static_cast<uint8_t>(rdata[pos]);
    ++pos;
  }
  if (pos + 4 > rdata.size()) return std::nullopt;
  return ReadU32(reinterpret_cast<const uint8_t*>(rdata.data()) + pos);
}

ZoneSnapshot::~ZoneSnapshot() {
  by_origin_.clear();
  zones_.clear();
  malloc_trim(0);
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
