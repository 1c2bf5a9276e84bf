// RDATA of the records signing adds, from presentation form, without ldns: DS (RFC 4034 §5.3),
// RRSIG (§3.2) and NSEC3 (RFC 5155 §3.3). A signed TLD is mostly these lines; handing each to
// ldns's text parser was most of its load time. Only the plain forms signers write are taken
// (numbers as digits, times as YYYYMMDDHHmmSS, hex and base64 possibly split over tokens, a
// next hashed owner in whole base32hex quanta, types by mnemonic or TYPEnnn); anything else
// returns false and the caller gives the line to ldns, whose verdicts on odd input stay the
// reference.
#ifndef ONEPASS_HANDLERS_DNS_ZONE_TEXT_DNSSEC_H_
#define ONEPASS_HANDLERS_DNS_ZONE_TEXT_DNSSEC_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace onepass::dns {

// "KEYTAG ALG DIGESTTYPE HEX..." to wire RDATA appended to `rdata` (empty on entry).
bool DsRdataFromText(absl::Span<const absl::string_view> tokens, std::string& rdata);

// "TYPE ALG LABELS TTL EXPIRATION INCEPTION KEYTAG SIGNER BASE64..." to wire RDATA;
// `signer_wire` is tokens[7] already made a wire name by the caller (case kept, as ldns does).
bool RrsigRdataFromText(absl::Span<const absl::string_view> tokens, absl::string_view signer_wire,
                        std::string& rdata);

// "HASHALG FLAGS ITERATIONS SALT NEXTHASHED TYPE..." to wire RDATA: SALT hex or "-" (empty),
// NEXTHASHED base32hex (RFC 4648 §7) without padding, a multiple of 8 characters (SHA-1's 32),
// then at least one type for the bitmap (RFC 4034 §4.1.2), in any order.
bool Nsec3RdataFromText(absl::Span<const absl::string_view> tokens, std::string& rdata);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_ZONE_TEXT_DNSSEC_H_
