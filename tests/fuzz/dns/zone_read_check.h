// The zone fuzzers' common end: `zone` read by the whole reader (handlers/dns/zone_text.h) with
// `options`, aborting when its ldns check finds the fast path and ldns differing (the reader's
// internal error): the fuzzer's finding.
#ifndef ONEPASS_TESTS_FUZZ_DNS_ZONE_READ_CHECK_H_
#define ONEPASS_TESTS_FUZZ_DNS_ZONE_READ_CHECK_H_

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "handlers/dns/zone_text.h"

namespace onepass::dns::fuzz {

// Where ldns, not the reader, departs from NSD and RFC 1035, so that no ldns check can hold:
// a NUL byte (ldns reads C strings), a CR (ldns turns one inside quotes into a space), "\#"
// (ldns reads one that is not a TXT's first token as RFC 3597 generic RDATA) and "\@" (ldns
// reads the name "\@." as the origin; the reader, as NSD, as the label "@").
inline bool LdnsComparable(absl::string_view text) {
  return !absl::StrContains(text, '\0') && !absl::StrContains(text, '\r') &&
         !absl::StrContains(text, "\\#") && !absl::StrContains(text, "\\@");
}

inline void ReadExpectingNoDifference(const std::string& zone, const ZoneTextOptions& options) {
  const absl::Status status =
      ReadMasterFile("fuzz.zone", zone, options, [](TextRecord&) { return absl::OkStatus(); });
  if (status.code() == absl::StatusCode::kInternal) {  // fast path != ldns
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    std::abort();
  }
}

}  // namespace onepass::dns::fuzz

#endif  // ONEPASS_TESTS_FUZZ_DNS_ZONE_READ_CHECK_H_
