// Fuzz target: the zone reader as a whole (handlers/dns/zone_text.h) with its check against ldns
// on. Any text after "$ORIGIN example." and "$TTL 300": the tokenizer (parentheses, quotes,
// escapes, comments, directives), every record of a type whose form the fast path takes (A,
// AAAA, NS, CNAME, PTR, MX, TXT, DS, RRSIG, NSEC3) compared byte for byte with ldns's reading of
// it, every other record read by ldns. The reader must never find the two differing (an
// internal error), crash or hang. No ldns check where ldns is the one that departs from NSD
// and RFC 1035 (zone_read_check.h's LdnsComparable). $INCLUDE is refused (depth 0): no file is
// read but the input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "handlers/dns/zone_text.h"
#include "tests/fuzz/dns/zone_read_check.h"

// ldns 1.8.3 leaks two strdup'd tokens (16 bytes) on an error path of its IPSECKEY reader
// (ldns_str2rdf_ipseckey, a malformed gateway): a zone with such a record fails to load and
// loses them once per read. libldns's leak, not ours: LeakSanitizer is told to leave it.
extern "C" const char* __lsan_default_suppressions() { return "leak:ldns_str2rdf_ipseckey\n"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  if (absl::StrContains(absl::AsciiStrToLower(input), "$include")) return 0;
  std::string zone = "$ORIGIN example.\n$TTL 300\n";
  zone.append(input.data(), input.size());
  onepass::dns::ZoneTextOptions options;
  options.max_include_depth = 0;
  options.verify_with_ldns = onepass::dns::fuzz::LdnsComparable(input);
  options.max_errors = 1000;
  onepass::dns::fuzz::ReadExpectingNoDifference(zone, options);
  return 0;
}
