// The RDAP query parser (RFC 9082): an HTTP request target into a lookup, or why it is none.
// A pure function of its input; no state between calls.
//
// Accepted: origin-form ("/domain/example.com") and absolute-form ("http://host/domain/...",
// RFC 9112 §3.2.2), under the path of --rdap-base-url when it has one. Each path segment is
// percent-decoded once (RFC 3986 §2.1); a segment that decodes to '/', NUL or another control
// byte, an empty segment, "." or ".." (RFC 3986 §5.2.4: a path that could climb), or a bad
// escape is a 400. Names are case-insensitive, A-labels or U-labels (IDNA2008 with the UTS #46
// mapping via libidn2, as the Whois query parser does), one trailing dot allowed.
#ifndef ONEPASS_HANDLERS_RDAP_RDAP_PATH_H_
#define ONEPASS_HANDLERS_RDAP_RDAP_PATH_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace onepass::rdap {

enum class RdapQueryKind {
  kDomain,        // /domain/NAME (RFC 9082 §3.1.3)
  kNameserver,    // /nameserver/NAME (§3.1.4)
  kEntity,        // /entity/HANDLE (§3.1.5)
  kHelp,          // /help (§3.1.6)
  kDomainSearch,  // /domains?name=PATTERN (§3.2.1)
};

struct RdapQuery {
  RdapQueryKind kind = RdapQueryKind::kHelp;
  // The normalized key in the caller's scratch: an upper-case A-label name, an upper-case
  // handle, or (search) the upper-case name or prefix before the '*'.
  absl::string_view key;
  bool prefix = false;  // search: `key` is a prefix (the pattern ended in '*')
};

struct RdapPathResult {
  // 0 when `query` holds a lookup; else the HTTP status to answer (400, 404, 422, 501) and why.
  int status = 0;
  absl::string_view reason;  // static storage (or libidn2's static messages)
  RdapQuery query;
};

struct RdapPathConfig {
  // The path of --rdap-base-url without its trailing '/' ("" or "/rdap"); queries are below it.
  std::string base_path;
  // Search: the fewest characters a pattern must have before its '*'.
  size_t search_min_prefix = 2;
  bool search_enabled = true;
};

// Per-worker buffers the parser writes to (reused, so a worker allocates nothing once they
// have grown, but for libidn2's own allocation when a name has non-ASCII characters).
struct RdapScratch {
  std::string decoded;
  std::string key;
};

// Parses `target` (the request-target of the request line, visible ASCII only). The key is
// written to scratch->key.
RdapPathResult ParseRdapTarget(absl::string_view target, const RdapPathConfig& config,
                               RdapScratch* scratch);

// Percent-decodes `in` (RFC 3986 §2.1) into `*out`; false on a bad escape or a decoded NUL,
// control byte, DEL or '/'. '+' stays '+' (RFC 3986 has no form encoding).
bool PercentDecode(absl::string_view in, std::string* out);

}  // namespace onepass::rdap

#endif  // ONEPASS_HANDLERS_RDAP_RDAP_PATH_H_
