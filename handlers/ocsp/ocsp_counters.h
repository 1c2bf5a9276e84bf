// The OCSP handler's counters (HandlerFactory::Counters): answers by OCSPResponseStatus
// (RFC 6960 §4.2.1) and by HTTP error status.
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_COUNTERS_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_COUNTERS_H_

#include <cstddef>

#include "handlers/handler_counters.h"

namespace onepass::ocsp {

// The counters in index order: the enum OcspCounter indexes the table kOcspCounters.
#define ONEPASS_OCSP_COUNTERS(COUNTER, GAUGE)                                                      \
  COUNTER(kSuccessful, "ocsp_responses", "status", "successful", "200 with a pre-signed response") \
  COUNTER(kMalformedRequest, "ocsp_responses", "status", "malformedRequest",                       \
          "body or path not a DER OCSPRequest")                                                    \
  COUNTER(kUnauthorized, "ocsp_responses", "status", "unauthorized",                               \
          "no known CertID with a valid response")                                                 \
  COUNTER(kExpired, "ocsp_expired", "", "",                                                        \
          "unauthorized answers where a known response had expired")                               \
  COUNTER(kCertIdsNotCovered, "ocsp_certids_not_covered", "", "",                                  \
          "unauthorized: several CertIDs, not all in one pre-signed response")                     \
  COUNTER(kNotModified, "ocsp_not_modified", "", "",                                               \
          "304: If-None-Match or If-Modified-Since matched")                                       \
  COUNTER(kContinue, "ocsp_continue", "", "", "interim 100 Continue sent (Expect: 100-continue)")  \
  COUNTER(kCrlFull, "ocsp_crl_responses", "status", "200", "a whole CRL (--crl-dir)")              \
  COUNTER(kCrlPartial, "ocsp_crl_responses", "status", "206", "a byte range of a CRL")             \
  COUNTER(kCrlNotModified, "ocsp_crl_responses", "status", "304",                                  \
          "If-None-Match or If-Modified-Since matched")                                            \
  COUNTER(kCrlUnsatisfiable, "ocsp_crl_responses", "status", "416", "a Range beyond the CRL")      \
  COUNTER(kHttp400, "ocsp_http_errors", "status", "400",                                           \
          "malformed HTTP, bad base64, or closed mid-request")                                     \
  COUNTER(kHttp404, "ocsp_http_errors", "status", "404", "a path that is not the responder's")     \
  COUNTER(kHttp405, "ocsp_http_errors", "status", "405", "a method other than GET, HEAD and POST") \
  COUNTER(kHttp411, "ocsp_http_errors", "status", "411", "POST without Content-Length")            \
  COUNTER(kHttp413, "ocsp_http_errors", "status", "413", "POST body beyond --ocsp-max-body-bytes") \
  COUNTER(kHttp414, "ocsp_http_errors", "status", "414",                                           \
          "request line beyond --ocsp-max-header-bytes")                                           \
  COUNTER(kHttp415, "ocsp_http_errors", "status", "415", "POST without application/ocsp-request")  \
  COUNTER(kHttp431, "ocsp_http_errors", "status", "431",                                           \
          "header fields beyond --ocsp-max-header-bytes")                                          \
  COUNTER(kHttp501, "ocsp_http_errors", "status", "501", "Transfer-Encoding")                      \
  COUNTER(kHttp505, "ocsp_http_errors", "status", "505", "an HTTP version other than 1.x")         \
  COUNTER(kHttpOther, "ocsp_http_errors", "status", "other", "any other HTTP error status")        \
  COUNTER(kOutputFull, "ocsp_output_full", "", "",                                                 \
          "response did not fit the output buffer; closed (a bug)")
ONEPASS_HANDLER_COUNTERS(OcspCounter, kOcspCounters, ONEPASS_OCSP_COUNTERS)

// The counter of an HTTP error `status` (kHttpOther for one not listed).
inline OcspCounter HttpErrorCounter(int status) {
  switch (status) {
    case 400:
      return OcspCounter::kHttp400;
    case 404:
      return OcspCounter::kHttp404;
    case 405:
      return OcspCounter::kHttp405;
    case 411:
      return OcspCounter::kHttp411;
    case 413:
      return OcspCounter::kHttp413;
    case 414:
      return OcspCounter::kHttp414;
    case 415:
      return OcspCounter::kHttp415;
    case 431:
      return OcspCounter::kHttp431;
    case 501:
      return OcspCounter::kHttp501;
    case 505:
      return OcspCounter::kHttp505;
    default:
      return OcspCounter::kHttpOther;
  }
}

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_COUNTERS_H_
