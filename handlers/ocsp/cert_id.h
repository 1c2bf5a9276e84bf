// An OCSP CertID (RFC 6960 §4.1.1) as views into DER bytes, and the index key built from it.
//
// The responder's index maps a CertID to a pre-signed response. A CertID names a certificate by
// the hash of its issuer's name and key and its serial number, under one hash algorithm: the
// same certificate asked with SHA-1 (what clients mostly send, RFC 5019 §2.1.1) and with SHA-256
// gives two different CertIDs, so each needs its own index entry (and a pre-signed response
// whose SingleResponse carries that CertID). The key therefore includes the algorithm. Aliasing
// a SHA-256 CertID to a response signed for the SHA-1 one (computable at load time from the
// issuer certificate) would not help: clients find their SingleResponse by comparing CertIDs,
// algorithm included (OpenSSL's OCSP_resp_find), so the signer must produce one per algorithm.
#ifndef ONEPASS_HANDLERS_OCSP_CERT_ID_H_
#define ONEPASS_HANDLERS_OCSP_CERT_ID_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace onepass::ocsp {

// Bounds on the fields we accept; larger ones make a request malformed and a response unusable.
inline constexpr size_t kMaxHashAlgorithmOidBytes = 32;  // SHA-1's OID content is 5 bytes
inline constexpr size_t kMaxCertIdHashBytes = 64;        // SHA-512
// RFC 5280 §4.1.2.2 caps serials at 20 octets; real certificates have broken that, so allow more.
inline constexpr size_t kMaxSerialNumberBytes = 64;
inline constexpr size_t kMaxCertIdKeyBytes =
    4 + kMaxHashAlgorithmOidBytes + 2 * kMaxCertIdHashBytes + kMaxSerialNumberBytes;

// The four fields, each a view of DER content octets (no tag or length): the OBJECT IDENTIFIER
// of hashAlgorithm (its parameters, NULL or absent, are ignored), the two OCTET STRINGs and the
// INTEGER serialNumber in its minimal two's complement form.
struct CertIdView {
  absl::Span<const uint8_t> hash_algorithm_oid;
  absl::Span<const uint8_t> issuer_name_hash;
  absl::Span<const uint8_t> issuer_key_hash;
  absl::Span<const uint8_t> serial_number;
};

// Storage for an index key: each field length-prefixed by one byte, concatenated.
using CertIdKeyBuffer = std::array<char, kMaxCertIdKeyBytes>;

// Writes the index key of `id` into `buffer` and returns a view of it; an empty view when a field
// is empty or over its bound. Allocation-free: the lookup path uses it for every request.
absl::string_view EncodeCertIdKey(const CertIdView& id, CertIdKeyBuffer& buffer);

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_CERT_ID_H_
