// Loads RFC 1035 master files with ldns into an immutable ZoneSnapshot.
#ifndef ONEPASS_HANDLERS_DNS_ZONE_LOADER_H_
#define ONEPASS_HANDLERS_DNS_ZONE_LOADER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "handlers/dns/zone_snapshot.h"
#include "handlers/dns/zone_text.h"
#include "handlers/load_phases.h"

namespace onepass::dns {

// A zone's master-file text and the name errors are reported under (a path, or
// "<embedded default zone>").
struct ZoneSource {
  std::string display_name;
  std::string text;
};

struct ZoneLoadOptions {
  // NSEC3 iterations above this refuse the zone: every hash costs the server and validators
  // that much, and validators treat high counts as insecure (RFC 9276 §3.1, §3.2 advise 0).
  uint16_t max_nsec3_iterations = 100;
  // The master-file reader: $INCLUDE depth, the fast-path check against ldns (tests).
  ZoneTextOptions text;
  // When set, ParseZone and BuildSnapshot mark "parse" (the text read into records) and
  // "index" (names, empty non-terminals, denial chains, the snapshot) on it.
  LoadPhaseTimer* phases = nullptr;
};

// Parses one zone. The origin is the owner of the SOA (which must be the first record, as
// RFC 1035 §5.2 requires). Every record must lie at or below the origin, in class IN; a CNAME
// may share its owner only with the RRSIG and NSEC that signing adds (RFC 1034 §3.6.2,
// RFC 4035 §2.5). Errors name "file:line". $INCLUDE is resolved against the folder of
// `source.display_name` (zone_text.h).
absl::StatusOr<std::unique_ptr<Zone>> ParseZone(const ZoneSource& source,
                                                const ZoneLoadOptions& options = {});

// Reads and parses every file; fails, naming every bad file (one line per error, up to
// options.text.max_errors per file), if any is bad or two zones have one origin.
absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> LoadZoneFiles(
    const std::vector<std::string>& paths, const ZoneLoadOptions& options = {});

// Reads one zone file into a source named by its path.
absl::StatusOr<ZoneSource> ReadZoneFile(const std::string& path);

// Builds a snapshot from already-read sources (the embedded default zone, tests). Each
// source's text is freed once its zone is read, before its index is built (a reload's peak
// holds the old zone too): pass them moved; an lvalue is copied.
absl::StatusOr<std::shared_ptr<const ZoneSnapshot>> BuildSnapshot(
    std::vector<ZoneSource> sources, const ZoneLoadOptions& options = {});

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_ZONE_LOADER_H_
