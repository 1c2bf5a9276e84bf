// Fuzz target: the zone reader's DS, RRSIG and NSEC3 fast paths (handlers/dns/zone_text_dnssec.h),
// one input line per record, "TYPE RDATA...". A form the fast path takes must be one ldns takes
// too, with the same bytes (ldns is the reference, and stays the parser of every form the fast
// path declines); DS hex and RRSIG base64 joined into one token give the same bytes as split.
// The same lines then go through the whole reader (parentheses, quotes, comments across lines)
// with its check against ldns on, which must never find the two differing. Lines where ldns
// departs from NSD (zone_read_check.h's LdnsComparable: a NUL byte, a CR, "\#", "\@") get no
// ldns comparison, only the fast path and the reader.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "handlers/dns/zone_text.h"
#include "tests/fuzz/dns/zone_read_check.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace {

using onepass::dns::testing::FastDnssecRdata;
using onepass::dns::testing::LdnsRdata;

constexpr char kOrigin[] = "example.";

bool FastType(const std::string& type) {
  return type == "DS" || type == "RRSIG" || type == "NSEC3";
}

// False for a line that is not "DS|RRSIG|NSEC3 ...".
bool CheckLine(absl::string_view line) {
  std::vector<std::string> tokens =
      absl::StrSplit(line, absl::ByAnyChar(" \t\r"), absl::SkipEmpty());
  if (tokens.empty() || !FastType(tokens[0])) return false;
  const std::string type = tokens[0];
  tokens.erase(tokens.begin());
  const std::string text = absl::StrJoin(tokens, " ");
  std::string fast;
  if (!FastDnssecRdata(type, text, kOrigin, fast)) return true;
  // ldns reads a C string: past a NUL byte it would see another record than the fast path.
  // And the reader never hands over a token holding an unescaped ';', '(', ')' or '"' (they
  // end tokens there), which ldns would read as the syntax they are: the reader pass has them.
  if (text.find_first_of(";()\"\0", 0, 5) != std::string::npos) return true;
  // Nor where ldns departs from NSD (an RRSIG signer "\@." is the origin to ldns).
  if (!onepass::dns::fuzz::LdnsComparable(text)) return true;
  const absl::StatusOr<std::string> reference = LdnsRdata(type, text, kOrigin);
  if (!reference.ok() || *reference != fast) std::abort();
  // The digest or signature (after 3 and 8 fields) as one token.
  const size_t fixed = type == "DS" ? 3 : type == "RRSIG" ? 8 : tokens.size();
  if (tokens.size() <= fixed + 1) return true;
  std::vector<std::string> joined(tokens.begin(), tokens.begin() + fixed);
  joined.push_back(absl::StrJoin(tokens.begin() + fixed, tokens.end(), ""));
  std::string rejoined;
  if (!FastDnssecRdata(type, absl::StrJoin(joined, " "), kOrigin, rejoined) || rejoined != fast) {
    std::abort();
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  std::string zone = "$ORIGIN example.\n$TTL 300\n";
  for (const absl::string_view line : absl::StrSplit(input, '\n')) {
    // Only these lines, so that every record the reader sees is of a fast type (the other
    // types' fast paths are zone_text_test's, and ldns reads a "\#" that is not the first
    // token of a TXT as RFC 3597 generic RDATA, which the reader, as NSD, does not).
    if (CheckLine(line)) absl::StrAppend(&zone, "x IN ", line, "\n");
  }
  onepass::dns::ZoneTextOptions options;
  options.verify_with_ldns = onepass::dns::fuzz::LdnsComparable(input);  // as above
  options.max_errors = 1000;
  onepass::dns::fuzz::ReadExpectingNoDifference(zone, options);
  return 0;
}
