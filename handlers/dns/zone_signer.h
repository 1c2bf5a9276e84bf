// Signing at load (--dnssec_keys DIR): an unsigned zone is signed with ldns's signing
// functions and the keys ldns-keygen wrote for its origin, so an operator needs no separate
// signing step; a reload signs again. The result is a master file that the zone loader reads
// like any presigned zone.
#ifndef ONEPASS_HANDLERS_DNS_ZONE_SIGNER_H_
#define ONEPASS_HANDLERS_DNS_ZONE_SIGNER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "handlers/dns/zone_loader.h"

namespace onepass::dns {

struct SigningConfig {
  // Folder with K<origin>.+<alg>+<tag>.private and .key pairs (ldns-keygen's names). Every
  // pair for a zone's origin is used; a DNSKEY with the SEP bit (257) signs the DNSKEY RRset
  // (ldns's KSK/ZSK split).
  std::string keys_dir;
  // NSEC3 (RFC 5155) with the parameters RFC 9276 §3.1 advises: SHA-1, no salt, 0 iterations,
  // no opt-out; otherwise NSEC (RFC 4034 §4).
  bool nsec3 = false;
  // Signature validity (RFC 4034 §3.1.5), seconds since the epoch; the caller reads the clock.
  uint32_t inception = 0;
  uint32_t expiration = 0;
};

// Signs `source` (an unsigned zone; an existing signature is replaced) and returns the signed
// master file text under the same display name. Fails when no key for the origin is in
// keys_dir, a key does not load, or signing fails.
absl::StatusOr<ZoneSource> SignZone(const ZoneSource& source, const SigningConfig& config);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_ZONE_SIGNER_H_
