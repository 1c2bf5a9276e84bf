// The OCSP handler's counters (HandlerFactory::Counters): answers by OCSPResponseStatus
// (RFC 6960 §4.2.1) and by HTTP error status.
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_COUNTERS_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_COUNTERS_H_

#include <cstddef>
#include <iterator>

#include "handlers/handler_counters.h"

namespace onepass::ocsp {

// Indexes into kOcspCounters.
enum class OcspCounter : size_t {
  kSuccessful,
  kMalformedRequest,
  kUnauthorized,
  kExpired,
  kCertIdsNotCovered,
  kNotModified,
  kContinue,
  kCrlFull,
  kCrlPartial,
  kCrlNotModified,
  kCrlUnsatisfiable,
  kHttp400,
  kHttp404,
  kHttp405,
  kHttp411,
  kHttp413,
  kHttp414,
  kHttp415,
  kHttp431,
  kHttp501,
  kHttp505,
  kHttpOther,
  kOutputFull,
  kCount,
};

inline constexpr CounterSpec kOcspCounters[] = {
    {"ocsp_responses", "status", "successful", "200 with a pre-signed response"},
    {"ocsp_responses", "status", "malformedRequest", "body or path not a DER OCSPRequest"},
    {"ocsp_responses", "status", "unauthorized", "no known CertID with a valid response"},
    {"ocsp_expired", "", "", "unauthorized answers where a known response had expired"},
    {"ocsp_certids_not_covered", "", "",
     "unauthorized: several CertIDs, not all in one pre-signed response"},
    {"ocsp_not_modified", "", "", "304: If-None-Match or If-Modified-Since matched"},
    {"ocsp_continue", "", "", "interim 100 Continue sent (Expect: 100-continue)"},
    {"ocsp_crl_responses", "status", "200", "a whole CRL (--crl-dir)"},
    {"ocsp_crl_responses", "status", "206", "a byte range of a CRL"},
    {"ocsp_crl_responses", "status", "304", "If-None-Match or If-Modified-Since matched"},
    {"ocsp_crl_responses", "status", "416", "a Range beyond the CRL"},
    {"ocsp_http_errors", "status", "400", "malformed HTTP, bad base64, or closed mid-request"},
    {"ocsp_http_errors", "status", "404", "a path that is not the responder's"},
    {"ocsp_http_errors", "status", "405", "a method other than GET, HEAD and POST"},
    {"ocsp_http_errors", "status", "411", "POST without Content-Length"},
    {"ocsp_http_errors", "status", "413", "POST body beyond --ocsp-max-body-bytes"},
    {"ocsp_http_errors", "status", "414", "request line beyond --ocsp-max-header-bytes"},
    {"ocsp_http_errors", "status", "415", "POST without application/ocsp-request"},
    {"ocsp_http_errors", "status", "431", "header fields beyond --ocsp-max-header-bytes"},
    {"ocsp_http_errors", "status", "501", "Transfer-Encoding"},
    {"ocsp_http_errors", "status", "505", "an HTTP version other than 1.x"},
    {"ocsp_http_errors", "status", "other", "any other HTTP error status"},
    {"ocsp_output_full", "", "", "response did not fit the output buffer; closed (a bug)"},
};
static_assert(std::size(kOcspCounters) == static_cast<size_t>(OcspCounter::kCount));

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

inline void Count(HandlerCounters& counters, OcspCounter counter) {
  counters.Add(static_cast<size_t>(counter));
}

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_COUNTERS_H_
