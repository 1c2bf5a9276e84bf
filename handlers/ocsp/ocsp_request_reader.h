// Extracts the CertIDs of a DER OCSPRequest (RFC 6960 §4.1.1) on the hot path.
//
// Why a DER walker and not OpenSSL's d2i_OCSP_REQUEST: d2i builds a tree of heap objects (a
// dozen allocations for the smallest request) only for us to read four fields and free it all,
// on every request of every connection. This walker checks the structure strictly over the
// request's own bytes and returns views into them: no allocation, no copy, a few hundred
// instructions. OpenSSL is still what reads the pre-signed responses at load time, where cost does
// not matter and its completeness does; the unit tests check that the two agree on every CertID.
//
// What it checks: the whole body is exactly one OCSPRequest in DER (definite minimal lengths, no
// trailing bytes), TBSRequest's fields in order with their tags, each Request's CertID fully
// (AlgorithmIdentifier with a well-formed OID, two OCTET STRINGs, a minimal INTEGER). Optional
// parts we do not use (requestorName, extensions including the nonce, the signature) are checked
// only as well-formed elements and skipped: RFC 5019 §2.1.2 lets a responder of pre-signed
// responses ignore the nonce.
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_REQUEST_READER_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_REQUEST_READER_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "handlers/ocsp/cert_id.h"

namespace onepass::ocsp {

// RFC 5019 §2.1.1 has clients send one Request; we look at up to this many and check the
// structure of the rest.
inline constexpr size_t kMaxCertIdsPerRequest = 8;

struct OcspRequestCertIds {
  std::array<CertIdView, kMaxCertIdsPerRequest> ids;
  size_t count = 0;          // ids[0..count) are valid; >= 1 on success
  size_t request_count = 0;  // Requests in requestList (may exceed count)
};

// Fills `out` from `der`, which must be exactly one DER OCSPRequest with at least one Request.
// Returns false when it is not (the responder then answers malformedRequest, RFC 6960 §4.2.1).
// The views in `out` point into `der`.
bool ReadOcspRequestCertIds(absl::Span<const uint8_t> der, OcspRequestCertIds& out);

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_REQUEST_READER_H_
