// A strict reader of RFC 1035 §5 master files: tokens, parentheses, quotes, comments, the
// $ORIGIN, $TTL and $INCLUDE directives, owner and TTL inheritance, and the RDATA of the
// common types (A, AAAA, NS, CNAME, PTR, MX, TXT) parsed here directly; every other type is
// handed to ldns as one normalized line. What NSD rejects is an error here too, with file and
// line: a TTL such as "1x", an unterminated quoted string, an unknown directive, unbalanced
// parentheses.
//
// Why not ldns alone: ldns_rr_new_frm_fp_l accepts all of the above (a TTL of "1x" is 1, an
// open quote closes at the end of the line, "$FOO bar" is a TYPE0 record) and spends most of
// a large zone's load time allocating rdfs for A records.
#ifndef ONEPASS_HANDLERS_DNS_ZONE_TEXT_H_
#define ONEPASS_HANDLERS_DNS_ZONE_TEXT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "handlers/dns/zone_records.h"

namespace onepass::dns {

struct ZoneTextOptions {
  // Nesting of $INCLUDE beyond the top file (RFC 1035 §5.1); a file that includes itself,
  // directly or not, is an error at any depth.
  int max_include_depth = 8;
  // Also parse every fast-path record with ldns and fail if the two differ (tests: the
  // differential check that the fast path produces exactly what ldns produces).
  bool verify_with_ldns = false;
  // Errors reported per read before it stops (nsd-checkzone and kzonecheck also report more
  // than the first). Reading goes on after an error in one record or directive; it stops at
  // once after one that leaves the rest unreadable (quotes, parentheses), or that the sink
  // marks so by returning a status other than InvalidArgument.
  int max_errors = 20;
};

// One record as read. Views are valid during the callback only.
struct TextRecord {
  absl::string_view owner;  // canonical wire name
  uint16_t rr_class = 1;
  uint16_t type = 0;
  ParsedRecord record;     // ttl, rdata, compressible offsets, target
  absl::string_view text;  // "owner TYPE ..." as written, for messages
};

// Called per record; an error it returns is reported at the record's file and line. An
// InvalidArgument error lets the reading go on to the next record; any other stops it.
using TextRecordSink = absl::FunctionRef<absl::Status(TextRecord&)>;

// Reads `text` (named `display_name`, a path when $INCLUDE is to be resolved against its
// folder). `origin` is the initial $ORIGIN in presentation form ("" for none: then relative
// names before a $ORIGIN are an error). Errors read "file:line: what", one per line, up to
// options.max_errors of them; the last line says so when reading stopped at that limit.
//
// `owner_seen`, when given, is called with each new owner (canonical wire name) as soon as its
// line names it, before the RDATA is parsed: a caller that looks owners up in a large table
// prefetches the slot there, so that the cache miss overlaps the parse.
using OwnerHint = absl::FunctionRef<void(absl::string_view)>;
absl::Status ReadMasterFile(absl::string_view display_name, absl::string_view text,
                            const ZoneTextOptions& options, TextRecordSink sink);
absl::Status ReadMasterFile(absl::string_view display_name, absl::string_view text,
                            const ZoneTextOptions& options, TextRecordSink sink,
                            std::optional<OwnerHint> owner_seen);

// About how many owners `text` names, read without parsing it, to size a name table before
// reading: its lines that start with an owner (not with a blank, ';' or '$') and whose first
// token differs from the previous such line's. Exact where each owner's records stand
// together and $ORIGIN gives no relative name twice; a hint only (not $INCLUDEd files):
// a table sized from it grows like any other when it is low.
size_t EstimateOwnerCount(absl::string_view text);

// Presentation name (absolute, or relative to `origin`, which is absolute presentation) to
// wire form, case kept. False on a bad name.
bool NameFromText(absl::string_view text, absl::string_view origin, std::string& wire);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_ZONE_TEXT_H_
