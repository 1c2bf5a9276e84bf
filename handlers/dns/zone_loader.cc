#include "handlers/dns/zone_loader.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/data_file.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/zone_text.h"

namespace onepass::dns {
namespace {

// True for the records DNSSEC signing adds beside a CNAME (RFC 4035 §2.5).
bool AllowedBesideCname(uint16_t type) {
  return type == kTypeCname || type == kTypeRrsig || type == kTypeNsec;
}

// What a zone is built into while its file is read.
struct ZoneBuild {
  NameArena names;
  RRsetStore rrsets;
  NodeMap nodes;
  // The owner of the previous record: its RRsets are offered for sharing when the owner
  // changes (records of one owner usually stand together; one that comes later unshares).
  absl::string_view last_owner;
  // Its node, valid while the table keeps this capacity (a rehash moves the nodes): most
  // records follow one of the same owner, and need no lookup.
  Node* last_node = nullptr;
  size_t last_capacity = 0;

  Node* LastNode() {
    if (last_owner.empty()) return nullptr;
    if (nodes.capacity() == last_capacity) return last_node;
    auto it = nodes.find(last_owner);
    return it == nodes.end() ? nullptr : &it->second;
  }
};

// The compact copy of a parsed record, its bytes in the arena (interned for sharable types).
Record CompactRecord(const ParsedRecord& parsed, uint16_t type, RdataInterner& interner) {
  const bool dedup = RRsetStore::Sharable(type) || type == kTypeCname;
  Record record;
  record.ttl = parsed.ttl;
  record.compressible_offsets[0] = parsed.compressible_offsets[0];
  record.compressible_offsets[1] = parsed.compressible_offsets[1];
  record.compressible_count = parsed.compressible_count;
  record.rdata = interner.Intern(parsed.rdata, dedup);
  if (!parsed.target.empty()) {
    // Names in RDATA are mostly written in lower case already: then the target is those bytes.
    const size_t at = record.rdata.find(parsed.target);
    record.target = at != absl::string_view::npos ? record.rdata.substr(at, parsed.target.size())
                                                  : interner.Intern(parsed.target, /*dedup=*/true);
  }
  return record;
}

// Offers the finished RRsets of the previous record's owner for sharing (rrset_store.h). Not
// at a signed owner: its RRsets get signatures of their own.
void ShareRRsets(ZoneBuild& build) {
  Node* node = build.LastNode();
  if (node == nullptr || node->Find(kTypeRrsig) != nullptr) return;
  for (RRset*& rrset : node->rrsets) {
    if (!rrset->shared && RRsetStore::Sharable(rrset->type)) rrset = build.rrsets.Share(rrset);
  }
}

absl::Status AddRecord(const ZoneLoadOptions& options, const std::string& origin, TextRecord& rr,
                       ZoneBuild& build, RdataInterner& interner) {
  const absl::string_view owner = rr.owner;
  const uint16_t type = rr.type;
  if (!IsSubdomain(owner, origin)) {
    return absl::InvalidArgumentError(
        absl::StrCat("record outside zone ", NameToText(origin), ": ", rr.text));
  }
  if (rr.rr_class != kClassIn) {
    return absl::InvalidArgumentError(absl::StrCat("only class IN is served: ", rr.text));
  }
  if (type == kTypeSoa && owner != origin) {
    return absl::InvalidArgumentError(absl::StrCat("SOA not at the zone apex: ", rr.text));
  }
  if (type == kTypeOpt || type == kTypeTsig || type == kTypeAxfr || type == kTypeIxfr ||
      type == kTypeAny) {
    return absl::InvalidArgumentError(absl::StrCat("meta type in zone data: ", rr.text));
  }
  const ParsedRecord& record = rr.record;
  if ((type == kTypeNsec3 || type == kTypeNsec3param) && record.rdata.size() >= 4) {
    // RFC 5155 §3.2 / §4.2: algorithm, flags, then the iterations.
    const uint16_t iterations = ReadU16(reinterpret_cast<const uint8_t*>(record.rdata.data()) + 2);
    if (iterations > options.max_nsec3_iterations) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NSEC3 iterations ", iterations, " above the limit of ", options.max_nsec3_iterations,
          " (--dns_nsec3_max_iterations; RFC 9276 §3.1: validators treat high counts as "
          "insecure; re-sign with 0): ",
          rr.text));
    }
  }
  Node* found = nullptr;
  if (owner == build.last_owner) {
    found = build.LastNode();
  } else {
    ShareRRsets(build);
  }
  if (found == nullptr) {
    auto it = build.nodes.find(owner);
    if (it == build.nodes.end()) it = build.nodes.try_emplace(build.names.Intern(owner)).first;
    build.last_owner = it->first;
    found = &it->second;
    build.last_node = found;
    build.last_capacity = build.nodes.capacity();
  }
  Node& node = *found;
  RRset** rrset = nullptr;
  for (RRset*& existing : node.rrsets) {
    if (existing->type == type) {
      rrset = &existing;
    } else if ((type == kTypeCname && !AllowedBesideCname(existing->type)) ||
               (existing->type == kTypeCname && !AllowedBesideCname(type))) {
      // RFC 1034 §3.6.2: no other data at a CNAME's owner, except what signing adds
      // (RFC 4035 §2.5).
      return absl::InvalidArgumentError(absl::StrCat(
          "CNAME and other data at ", NameToText(std::string(owner)), " (RFC 1034 §3.6.2)"));
    }
  }
  if (rrset == nullptr) {
    node.rrsets.push_back(build.rrsets.New(type));
    rrset = &node.rrsets.back();
  }
  for (const Record& existing : (*rrset)->records) {
    if (existing.rdata == record.rdata) return absl::OkStatus();  // RFC 2181 §5: a set
  }
  if ((type == kTypeCname || type == kTypeSoa) && !(*rrset)->records.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("more than one ", type == kTypeCname ? "CNAME" : "SOA", " at ",
                     NameToText(std::string(owner)), " (RFC 1034 §3.6.2)"));
  }
  // A record for an owner seen before, whose RRset was shared meanwhile: change a copy.
  if ((*rrset)->shared) *rrset = build.rrsets.Unshare(*rrset);
  (*rrset)->records.push_back(CompactRecord(record, type, interner));
  return absl::OkStatus();
}

// An owner with nothing but NSEC3 and its RRSIGs: a hashed name of the NSEC3 chain.
bool OnlyNsec3(const Node& node) {
  bool nsec3 = false;
  for (const RRset* rrset : node.rrsets) {
    if (rrset->type == kTypeNsec3) {
      nsec3 = true;
    } else if (rrset->type != kTypeRrsig) {
      return false;
    }
  }
  return nsec3;
}

// ParseZone; with `text_to_free` (the source's own text), that text is freed as soon as it is
// read, before the index is built: at a reload's peak the old zone, the new one and the file
// would otherwise coexist.
absl::StatusOr<std::unique_ptr<Zone>> ParseZoneText(const ZoneSource& source,
                                                    const ZoneLoadOptions& options,
                                                    std::string* text_to_free) {
  if (source.text.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source.display_name, ": empty zone"));
  }
  std::string origin;
  ZoneBuild build;
  RdataInterner interner(build.names);
  // Sized for the owners the text names, counted in one scan (~0.1 s for 240 MB): no rehash
  // while loading, and no table twice the size the zone needs at the load's peak (a guess
  // from the text's size, 64 bytes a name, kept 4 M slots for a signed 1M-name TLD's 1.3 M).
  build.nodes.reserve(EstimateOwnerCount(source.text));
  const absl::Status read = ReadMasterFile(
      source.display_name, source.text, options.text,
      [&](TextRecord& rr) {
        if (origin.empty()) {
          // RFC 1035 §5.2: the zone starts with its SOA, whose owner is the origin.
          if (rr.type != kTypeSoa) {
            // Not InvalidArgument: without an origin every later record would fail too.
            return absl::FailedPreconditionError(
                "the first record must be the zone's SOA (RFC 1035 §5.2)");
          }
          origin = std::string(rr.owner);
        }
        return AddRecord(options, origin, rr, build, interner);
      },
      [&](absl::string_view owner) {
        // A new owner costs two cache misses in the name table (its control bytes and its
        // slot), a third of the whole load on a 1M-name zone: fetched while the RDATA parses.
        if (owner != build.last_owner) build.nodes.prefetch(owner);
      });
  if (!read.ok()) return read;
  if (text_to_free != nullptr) std::string().swap(*text_to_free);  // views into it are gone
  ShareRRsets(build);
  NodeMap& nodes = build.nodes;
  if (options.phases != nullptr) options.phases->Mark("parse");
  if (origin.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.display_name, ": no SOA record (RFC 1035 §5.2)"));
  }
  // NSEC3 owners leave the namespace (zone_snapshot.h). Then add the empty non-terminals
  // between each owner and the apex (RFC 4592 §2.2.2), which block wildcard synthesis.
  std::vector<absl::string_view> owners;
  owners.reserve(nodes.size());
  NodeMap nsec3_nodes;
  for (const auto& [owner, node] : nodes) {
    if (OnlyNsec3(node) && owner != origin) {
      nsec3_nodes.try_emplace(owner);
    } else {
      owners.push_back(owner);
    }
  }
  for (auto& [owner, node] : nsec3_nodes) {
    auto it = nodes.find(owner);
    node = std::move(it->second);
    nodes.erase(it);
  }
  for (const absl::string_view owner : owners) {
    absl::string_view name = owner;
    while (name.size() > origin.size()) {
      name = Parent(name);  // a suffix of an interned name: stable, no copy needed
      nodes.try_emplace(name);
    }
  }
  // Cut the table to its size where that frees slots: the reservation above counts the NSEC3
  // owners moved out, and may be high for owners named in more than one run. A rehash at the
  // same capacity would cost a pass and a second table at the load's peak for nothing (absl
  // rehash(0) always rebuilds); the erased NSEC3 slots mostly turn empty, not tombstones.
  const size_t smaller = nodes.capacity() / 2;  // absl capacities are 2^k - 1
  if (nodes.size() <= smaller - smaller / 8) nodes.rehash(0);
  auto zone = std::make_unique<Zone>(origin, std::move(build.names), std::move(build.rrsets),
                                     std::move(nodes), std::move(nsec3_nodes));
  if (options.phases != nullptr) options.phases->Mark("index");
  return zone;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Zone>> ParseZone(const ZoneSource& source,
                                                const ZoneLoadOptions& options) {
  return ParseZoneText(source, options, nullptr);
}

absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> BuildSnapshot(std::vector<ZoneSource> sources,
                                                                  const ZoneLoadOptions& options) {
  std::vector<std::unique_ptr<Zone>> zones;
  absl::flat_hash_set<std::string> origins;
  // Every file is read even after one fails, so that one run reports every bad file (each
  // with its errors, up to options.text.max_errors).
  std::vector<std::string> errors;
  for (ZoneSource& source : sources) {
    absl::StatusOr<std::unique_ptr<Zone>> zone = ParseZoneText(source, options, &source.text);
    if (!zone.ok()) {
      errors.emplace_back(zone.status().message());
      continue;
    }
    if (!origins.insert((*zone)->origin()).second) {
      errors.push_back(absl::StrCat(source.display_name, ": zone ", NameToText((*zone)->origin()),
                                    " is already loaded from another file"));
      continue;
    }
    zones.push_back(*std::move(zone));
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  if (zones.empty()) return absl::InvalidArgumentError("no zone to serve");
  auto snapshot = std::make_shared<const ZoneSnapshot>(std::move(zones));
  if (options.phases != nullptr) options.phases->Mark("index");
  return snapshot;
}

absl::StatusOr<ZoneSource> ReadZoneFile(const std::string& path) {
  // A regular file under --max-data-file-mb: a FIFO or /dev/zero must not hang or crash.
  absl::StatusOr<std::string> text = ReadDataFile(path, "zone file");
  if (!text.ok()) return text.status();
  return ZoneSource{path, *std::move(text)};
}

absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> LoadZoneFiles(
    const std::vector<std::string>& paths, const ZoneLoadOptions& options) {
  std::vector<ZoneSource> sources;
  for (const std::string& path : paths) {
    absl::StatusOr<ZoneSource> source = ReadZoneFile(path);
    if (!source.ok()) return source.status();
    sources.push_back(*std::move(source));
  }
  return BuildSnapshot(std::move(sources), options);
}

}  // namespace onepass::dns
