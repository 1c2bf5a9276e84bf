#include "handlers/dns/zone_loader.h"

#include <ldns/ldns.h>
#include <stdio.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/data_file.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

struct FileCloser {
  void operator()(FILE* f) const { fclose(f); }
};
struct LdnsRrDeleter {
  void operator()(ldns_rr* rr) const { ldns_rr_free(rr); }
};

std::string RdfName(const ldns_rdf* rdf) {
  return CanonicalName(ldns_rdf_data(rdf), ldns_rdf_size(rdf));
}

// RFC 3597 §4: only the names inside RR types defined in RFC 1035 may be compressed.
bool HasCompressibleNames(uint16_t type) {
  switch (type) {
    case kTypeNs:
    case kTypeMd:
    case kTypeMf:
    case kTypeCname:
    case kTypeSoa:
    case kTypeMb:
    case kTypeMg:
    case kTypeMr:
    case kTypePtr:
    case kTypeMinfo:
    case kTypeMx:
      return true;
    default:
      return false;
  }
}

// Index of the rdata field whose target drives CNAME chasing or additional-section
// processing (RFC 1035 §3.3.9 MX, RFC 2782 SRV), or -1.
int TargetField(uint16_t type) {
  switch (type) {
    case kTypeNs:
    case kTypeCname:
      return 0;
    case kTypeMx:
      return 1;
    case kTypeSrv:
      return 3;
    default:
      return -1;
  }
}

Record MakeRecord(const ldns_rr* rr) {
  Record record;
  record.ttl = ldns_rr_ttl(rr);
  const uint16_t type = ldns_rr_get_type(rr);
  const bool compressible = HasCompressibleNames(type);
  const int target_field = TargetField(type);
  for (size_t i = 0; i < ldns_rr_rd_count(rr); ++i) {
    const ldns_rdf* rdf = ldns_rr_rdf(rr, i);
    if (compressible && ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME &&
        record.compressible_count < 2) {
      record.compressible_offsets[record.compressible_count++] =
          static_cast<uint16_t>(record.rdata.size());
    }
    if (static_cast<int>(i) == target_field && ldns_rdf_get_type(rdf) == LDNS_RDF_TYPE_DNAME) {
      record.target = RdfName(rdf);
    }
    record.rdata.append(reinterpret_cast<const char*>(ldns_rdf_data(rdf)), ldns_rdf_size(rdf));
  }
  return record;
}

absl::Status AddRecord(const ZoneLoadOptions& options, const std::string& origin, const ldns_rr* rr,
                       absl::flat_hash_map<std::string, Node>& nodes) {
  const std::string owner = RdfName(ldns_rr_owner(rr));
  const uint16_t type = ldns_rr_get_type(rr);
  // The record as text, for error messages only (printing every record would dominate the
  // load time of a signed zone).
  auto rr_text = [rr] {
    char* text = ldns_rr2str(rr);
    std::string out = text != nullptr ? text : "?";
    free(text);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  };
  if (!IsSubdomain(owner, origin)) {
    return absl::InvalidArgumentError(
        absl::StrCat("record outside zone ", NameToText(origin), ": ", rr_text()));
  }
  if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN) {
    return absl::InvalidArgumentError(absl::StrCat("only class IN is served: ", rr_text()));
  }
  if (type == kTypeSoa && owner != origin) {
    return absl::InvalidArgumentError(absl::StrCat("SOA not at the zone apex: ", rr_text()));
  }
  if (type == kTypeOpt || type == kTypeTsig || type == kTypeAxfr || type == kTypeIxfr ||
      type == kTypeAny) {
    return absl::InvalidArgumentError(absl::StrCat("meta type in zone data: ", rr_text()));
  }
  Record record = MakeRecord(rr);
  if ((type == kTypeNsec3 || type == kTypeNsec3param) && record.rdata.size() >= 4) {
    // RFC 5155 §3.2 / §4.2: algorithm, flags, then the iterations.
    const uint16_t iterations = ReadU16(reinterpret_cast<const uint8_t*>(record.rdata.data()) + 2);
    if (iterations > options.max_nsec3_iterations) {
      return absl::InvalidArgumentError(absl::StrCat(
          "NSEC3 iterations ", iterations, " above the limit of ", options.max_nsec3_iterations,
          " (--dns_nsec3_max_iterations; RFC 9276 §3.1: validators treat high counts as "
          "insecure; re-sign with 0): ",
          rr_text()));
    }
  }
  Node& node = nodes[owner];
  RRset* rrset = nullptr;
  for (RRset& existing : node.rrsets) {
    if (existing.type == type) rrset = &existing;
  }
  if (rrset == nullptr) {
    node.rrsets.push_back(RRset{type, {}, {}});
    rrset = &node.rrsets.back();
  }
  for (const Record& existing : rrset->records) {
    if (existing.rdata == record.rdata) return absl::OkStatus();  // RFC 2181 §5: a set
  }
  if ((type == kTypeCname || type == kTypeSoa) && !rrset->records.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("more than one ",
                                                   type == kTypeCname ? "CNAME" : "SOA", " at ",
                                                   NameToText(owner), " (RFC 1034 §3.6.2)"));
  }
  rrset->records.push_back(std::move(record));
  return absl::OkStatus();
}

// True for the records DNSSEC signing adds beside a CNAME (RFC 4035 §2.5).
bool AllowedBesideCname(uint16_t type) {
  return type == kTypeCname || type == kTypeRrsig || type == kTypeNsec;
}

// An owner with nothing but NSEC3 and its RRSIGs: a hashed name of the NSEC3 chain.
bool OnlyNsec3(const Node& node) {
  bool nsec3 = false;
  for (const RRset& rrset : node.rrsets) {
    if (rrset.type == kTypeNsec3) {
      nsec3 = true;
    } else if (rrset.type != kTypeRrsig) {
      return false;
    }
  }
  return nsec3;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Zone>> ParseZone(const ZoneSource& source,
                                                const ZoneLoadOptions& options) {
  std::unique_ptr<FILE, FileCloser> file(
      fmemopen(const_cast<char*>(source.text.data()), source.text.size(), "r"));
  if (source.text.empty() || file == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(source.display_name, ": empty zone"));
  }
  // Record by record with ldns_rr_new_frm_fp_l rather than ldns_zone_new_frm_fp_l, whose error
  // path leaks every record read so far (ldns 1.8.3 frees the zone shallowly).
  ldns_rdf* origin_rdf = nullptr;    // $ORIGIN, owned; ldns replaces it in place
  ldns_rdf* previous_rdf = nullptr;  // the last owner, for blank owners; owned
  struct RdfsFree {
    ldns_rdf** a;
    ldns_rdf** b;
    ~RdfsFree() {
      if (*a != nullptr) ldns_rdf_deep_free(*a);
      if (*b != nullptr) ldns_rdf_deep_free(*b);
    }
  } rdfs_free{&origin_rdf, &previous_rdf};
  uint32_t default_ttl = 3600;
  bool ttl_directive = false;
  int line = 0;  // ldns counts the newlines it has read, the bad line's own included
  std::string origin;
  absl::flat_hash_map<std::string, Node> nodes;
  auto error_at_line = [&](absl::string_view what) {
    // A bad last line without a newline was not counted.
    const long pos = ftell(file.get());
    int at = line;
    if (pos >= 0 && static_cast<size_t>(pos) == source.text.size() && source.text.back() != '\n') {
      ++at;
    }
    return absl::InvalidArgumentError(absl::StrCat(source.display_name, ":", at, ": ", what));
  };
  while (!feof(file.get())) {
    ldns_rr* raw = nullptr;
    const ldns_status status =
        ldns_rr_new_frm_fp_l(&raw, file.get(), &default_ttl, &origin_rdf, &previous_rdf, &line);
    std::unique_ptr<ldns_rr, LdnsRrDeleter> rr(raw);
    switch (status) {
      case LDNS_STATUS_OK:
        break;
      case LDNS_STATUS_SYNTAX_EMPTY:
      case LDNS_STATUS_SYNTAX_ORIGIN:
        continue;
      case LDNS_STATUS_SYNTAX_TTL:
        ttl_directive = true;
        continue;
      case LDNS_STATUS_SYNTAX_INCLUDE:
        return error_at_line("$INCLUDE is not supported; give each file to --zone");
      default:
        return error_at_line(ldns_get_errorstr_by_id(status));
    }
    // RFC 1035 §5.1: without $TTL, an omitted TTL is the last one stated.
    if (!ttl_directive) default_ttl = ldns_rr_ttl(rr.get());
    if (origin.empty()) {
      // RFC 1035 §5.2: the zone starts with its SOA, whose owner is the origin.
      if (ldns_rr_get_type(rr.get()) != LDNS_RR_TYPE_SOA) {
        return error_at_line("the first record must be the zone's SOA (RFC 1035 §5.2)");
      }
      origin = RdfName(ldns_rr_owner(rr.get()));
    }
    if (absl::Status s = AddRecord(options, origin, rr.get(), nodes); !s.ok()) {
      return error_at_line(s.message());
    }
  }
  if (origin.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source.display_name, ": no SOA record (RFC 1035 §5.2)"));
  }
  // RFC 1034 §3.6.2: no other data at a CNAME's owner, except what signing adds
  // (RFC 4035 §2.5). NSEC3 owners leave the namespace (zone_snapshot.h). Then add the empty
  // non-terminals between each owner and the apex (RFC 4592 §2.2.2), which block wildcard
  // synthesis.
  std::vector<std::string> owners;
  owners.reserve(nodes.size());
  absl::flat_hash_map<std::string, Node> nsec3_nodes;
  for (const auto& [owner, node] : nodes) {
    if (node.Find(kTypeCname) != nullptr) {
      for (const RRset& rrset : node.rrsets) {
        if (AllowedBesideCname(rrset.type)) continue;
        return absl::InvalidArgumentError(absl::StrCat(source.display_name,
                                                       ": CNAME and other data at ",
                                                       NameToText(owner), " (RFC 1034 §3.6.2)"));
      }
    }
    if (OnlyNsec3(node) && owner != origin) {
      nsec3_nodes.emplace(owner, Node{});
    } else {
      owners.push_back(owner);
    }
  }
  for (auto& [owner, node] : nsec3_nodes) {
    auto it = nodes.find(owner);
    node = std::move(it->second);
    nodes.erase(it);
  }
  for (const std::string& owner : owners) {
    absl::string_view name = owner;
    while (name.size() > origin.size()) {
      name = Parent(name);
      nodes.try_emplace(std::string(name));
    }
  }
  return std::make_unique<Zone>(origin, std::move(nodes), std::move(nsec3_nodes));
}

absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> BuildSnapshot(
    const std::vector<ZoneSource>& sources, const ZoneLoadOptions& options) {
  std::vector<std::unique_ptr<Zone>> zones;
  absl::flat_hash_set<std::string> origins;
  for (const ZoneSource& source : sources) {
    absl::StatusOr<std::unique_ptr<Zone>> zone = ParseZone(source, options);
    if (!zone.ok()) return zone.status();
    if (!origins.insert((*zone)->origin()).second) {
      return absl::InvalidArgumentError(absl::StrCat(source.display_name, ": zone ",
                                                     NameToText((*zone)->origin()),
                                                     " is already loaded from another file"));
    }
    zones.push_back(*std::move(zone));
  }
  if (zones.empty()) return absl::InvalidArgumentError("no zone to serve");
  return std::make_shared<const ZoneSnapshot>(std::move(zones));
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
  return BuildSnapshot(sources, options);
}

}  // namespace onepass::dns
