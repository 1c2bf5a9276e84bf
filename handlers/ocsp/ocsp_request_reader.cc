#include "handlers/ocsp/ocsp_request_reader.h"

#include "handlers/ocsp/der_reader.h"

namespace onepass::ocsp {
namespace {

using Bytes = absl::Span<const uint8_t>;

bool NextTagIs(Bytes input, uint8_t tag) { return !input.empty() && input[0] == tag; }

// [n] EXPLICIT T: the content is exactly one element whose tag is `inner_tag` (0 = any tag).
bool ReadExplicit(Bytes& input, uint8_t outer_tag, uint8_t inner_tag, Bytes& inner_content) {
  Bytes outer;
  if (!ReadDerElementWithTag(input, outer_tag, outer)) return false;
  DerElement inner;
  if (!ReadDerElement(outer, inner) || !outer.empty()) return false;
  if (inner_tag != 0 && inner.tag != inner_tag) return false;
  inner_content = inner.content;
  return true;
}

bool ReadHash(Bytes& input, Bytes& hash) {
  return ReadDerElementWithTag(input, kDerOctetString, hash) && !hash.empty() &&
         hash.size() <= kMaxCertIdHashBytes;
}

// CertID ::= SEQUENCE { hashAlgorithm AlgorithmIdentifier, issuerNameHash OCTET STRING,
//                       issuerKeyHash OCTET STRING, serialNumber CertificateSerialNumber }
bool ReadCertId(Bytes cert_id, CertIdView& id) {
  Bytes algorithm;
  if (!ReadDerElementWithTag(cert_id, kDerSequence, algorithm)) return false;
  // AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL } (RFC 5280).
  if (!ReadDerElementWithTag(algorithm, kDerObjectIdentifier, id.hash_algorithm_oid) ||
      id.hash_algorithm_oid.size() > kMaxHashAlgorithmOidBytes ||
      !IsWellFormedDerOid(id.hash_algorithm_oid)) {
    return false;
  }
  if (!algorithm.empty()) {
    DerElement parameters;
    if (!ReadDerElement(algorithm, parameters) || !algorithm.empty()) return false;
  }
  if (!ReadHash(cert_id, id.issuer_name_hash) || !ReadHash(cert_id, id.issuer_key_hash)) {
    return false;
  }
  if (!ReadDerElementWithTag(cert_id, kDerInteger, id.serial_number) ||
      id.serial_number.size() > kMaxSerialNumberBytes || !IsMinimalDerInteger(id.serial_number)) {
    return false;
  }
  return cert_id.empty();
}

// Request ::= SEQUENCE { reqCert CertID, singleRequestExtensions [0] EXPLICIT Extensions OPT }
bool ReadRequest(Bytes request, CertIdView& id) {
  Bytes cert_id;
  if (!ReadDerElementWithTag(request, kDerSequence, cert_id) || !ReadCertId(cert_id, id)) {
    return false;
  }
  if (NextTagIs(request, DerContextTag(0))) {
    Bytes extensions;
    if (!ReadExplicit(request, DerContextTag(0), kDerSequence, extensions)) return false;
  }
  return request.empty();
}

// TBSRequest ::= SEQUENCE { version [0] EXPLICIT Version DEFAULT v1,
//                           requestorName [1] EXPLICIT GeneralName OPTIONAL,
//                           requestList SEQUENCE OF Request,
//                           requestExtensions [2] EXPLICIT Extensions OPTIONAL }
bool ReadTbsRequest(Bytes tbs, OcspRequestCertIds& out) {
  if (NextTagIs(tbs, DerContextTag(0))) {
    // DER omits a DEFAULT value, but clients that encode v1 explicitly exist; any other
    // version is one we do not speak.
    Bytes version;
    if (!ReadExplicit(tbs, DerContextTag(0), kDerInteger, version) || version.size() != 1 ||
        version[0] != 0) {
      return false;
    }
  }
  if (NextTagIs(tbs, DerContextTag(1))) {
    Bytes requestor_name;
    if (!ReadExplicit(tbs, DerContextTag(1), 0, requestor_name)) return false;
  }
  Bytes request_list;
  if (!ReadDerElementWithTag(tbs, kDerSequence, request_list)) return false;
  while (!request_list.empty()) {
    Bytes request;
    if (!ReadDerElementWithTag(request_list, kDerSequence, request)) return false;
    CertIdView id;
    if (!ReadRequest(request, id)) return false;
    if (out.count < out.ids.size()) out.ids[out.count++] = id;
    ++out.request_count;
  }
  if (out.request_count == 0) return false;
  if (NextTagIs(tbs, DerContextTag(2))) {
    Bytes extensions;
    if (!ReadExplicit(tbs, DerContextTag(2), kDerSequence, extensions)) return false;
  }
  return tbs.empty();
}

}  // namespace

// OCSPRequest ::= SEQUENCE { tbsRequest TBSRequest,
//                            optionalSignature [0] EXPLICIT Signature OPTIONAL }
bool ReadOcspRequestCertIds(absl::Span<const uint8_t> der, OcspRequestCertIds& out) {
  out.count = 0;
  out.request_count = 0;
  Bytes ocsp_request;
  if (!ReadDerElementWithTag(der, kDerSequence, ocsp_request) || !der.empty()) return false;
  Bytes tbs;
  if (!ReadDerElementWithTag(ocsp_request, kDerSequence, tbs) || !ReadTbsRequest(tbs, out)) {
    return false;
  }
  if (NextTagIs(ocsp_request, DerContextTag(0))) {
    Bytes signature;
    if (!ReadExplicit(ocsp_request, DerContextTag(0), kDerSequence, signature)) return false;
  }
  return ocsp_request.empty();
}

}  // namespace onepass::ocsp
