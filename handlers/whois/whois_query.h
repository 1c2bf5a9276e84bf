// The Whois query parser: one query line (as whois_framer.h cut it) into a lookup, and the
// errors a query can get. A pure function of its input (no state between calls).
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_QUERY_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_QUERY_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace onepass::whois {

// Why a query gets an error reply instead of a lookup. Each has a fixed one-line message.
enum class QueryError {
  kNone = 0,
  kTooLong,           // the line (without CRLF) is longer than --whois-max-query-bytes
  kNulByte,           // NUL anywhere in the line
  kControlByte,       // another C0 control byte, DEL, or a CR not followed by LF
  kEmpty,             // nothing but spaces and tabs
  kBadUtf8,           // bytes >= 0x80 that are not well-formed UTF-8 (RFC 3629 §4)
  kBadIdn,            // UTF-8 that IDNA2008/UTS#46 refuses (detail: libidn2's message)
  kBadDomainName,     // not LDH labels of 1..63 octets, 253 octets in all (RFC 1123 §2.1)
  kBadHandle,         // a contact handle with characters outside [A-Za-z0-9._-] or too long
  kMissingArgument,   // "domain" with nothing after it
  kUnknownQueryForm,  // several words and the first is no keyword
};

// The one-line text of `error`, without line end (e.g. "Error: query too long.").
absl::string_view QueryErrorMessage(QueryError error);

// What a query asks for.
enum class QueryKind {
  kAny,         // a bare name: domain, else nameserver, else contact handle (no dot)
  kDomain,      // "domain NAME"
  kNameserver,  // "nameserver NAME"
  kRegistrar,   // "registrar NAME" or "registrar IANA-ID"
  kContact,     // "contact HANDLE" or "entity HANDLE"
};

struct Query {
  QueryKind kind = QueryKind::kAny;
  // The lookup key, normalized: a domain name as upper-case ASCII (A-labels for IDNs) without
  // the trailing dot; a contact handle or registrar name upper-cased (ASCII letters only).
  // Points into the caller's scratch string.
  absl::string_view key;
  // kAny only: whether `key` is a syntactically valid domain name (else only a handle).
  bool key_is_domain_name = false;
  QueryError error = QueryError::kNone;
  // kBadIdn: libidn2's message (static storage), else empty.
  absl::string_view error_detail;
};

// Parses one query line (as framed above: no control bytes but TAB). Keywords are
// case-insensitive. The normalized key is written to `*scratch` (reused between calls, so a
// worker does not allocate per query once it has grown; IDN conversion does allocate inside
// libidn2). On error, Query::error says why.
Query ParseQuery(absl::string_view line, std::string* scratch);

// Normalizes a domain name for lookup: one trailing dot dropped, UTF-8 converted to A-labels
// with libidn2 (IDNA2008 with UTS#46 non-transitional mapping), LDH syntax checked, upper-cased.
// Writes the result to `*out`. Returns kNone, kBadUtf8, kBadIdn (and sets *idn_detail) or
// kBadDomainName.
QueryError NormalizeDomainName(absl::string_view name, std::string* out,
                               absl::string_view* idn_detail);

// True if `name` (ASCII, no trailing dot) is LDH labels of 1..63 octets joined by dots, 253
// octets at most, no label starting or ending with '-' (RFC 1123 §2.1, RFC 5891 §4.2.3.1).
bool IsValidDomainName(absl::string_view name);

// True if `handle` is 1..64 of [A-Za-z0-9._-] (EPP contact:id, RFC 5733 §2.1, is 3..16 such
// characters; registries' own handles run longer).
bool IsValidContactHandle(absl::string_view handle);

// True if `text` is well-formed UTF-8 (RFC 3629 §4: no overlongs, surrogates, > U+10FFFF).
bool IsValidUtf8(absl::string_view text);

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_QUERY_H_
