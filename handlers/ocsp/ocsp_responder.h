// The OCSP responder: one complete HTTP request in, one HTTP response appended, reading an
// immutable OcspSnapshot. Per worker (it owns the scratch space for decoded GET requests and
// the response writer); no clock, no I/O.
//
// What each request gets:
//   known CertID, response not expired  200, the pre-signed response + RFC 5019 §6.2 caching;
//                                       304 to a GET/HEAD whose If-None-Match or
//                                       If-Modified-Since matches (RFC 9110 §13.1, §15.4.5)
//   several CertIDs                     as one, when one pre-signed response holds them all
//                                       (RFC 6960 §4.1.1 allows a list); else unauthorized:
//                                       a response must not leave out a CertID that was asked
//   no known CertID (or only expired)   200, OCSPResponse `unauthorized` (6) (RFC 5019 §2.2.3)
//   body/path not a DER OCSPRequest     200, OCSPResponse `malformedRequest` (1) (RFC 6960 §4.2.1)
//   HEAD                                what GET gets, without the content (RFC 9110 §9.3.2)
//   not an OCSP request at all          404 wrong path, 405 (+Allow) other method, 400 bad
//                                       base64, 415 POST without application/ocsp-request,
//                                       411 POST without Content-Length
//   broken HTTP (RespondHttpError)      400/413/414/431/501/505 (see http::HttpError)
//   GET/HEAD /crl/NAME.crl              the CRL (crl_responder.h), with --crl-dir
// Each answer is counted in the worker's block (ocsp_counters.h).
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_RESPONDER_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_RESPONDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "absl/types/span.h"
#include "handlers/handler_counters.h"
#include "handlers/http/http_request_parser.h"
#include "handlers/ocsp/crl_responder.h"
#include "handlers/ocsp/crl_snapshot.h"
#include "handlers/ocsp/http_response_writer.h"
#include "handlers/ocsp/ocsp_snapshot.h"
#include "handlers/output_buffer.h"

namespace onepass::ocsp {

struct OcspHandlerConfig {
  http::HttpLimits http;
  // URL path the responder lives at: POST to it, GET below it ("/" serves POST / and GET /<b64>).
  std::string path = "/";
  // Pre-signed responses above this are not loaded; sizes the output buffers.
  size_t max_response_bytes = 16384;
  // The CRLs served at /crl/NAME.crl (--crl-dir); null: none.
  std::shared_ptr<const CrlSnapshot> crls;
};

class OcspResponder {
 public:
  // `snapshot` must not be null. `counters` holds kOcspCounters and outlives the responder.
  OcspResponder(const OcspHandlerConfig& config, std::shared_ptr<const OcspSnapshot> snapshot,
                HandlerCounters& counters);

  // Appends the answer to a complete `request`; false (and nothing appended) if it does not fit.
  bool Respond(const http::HttpRequest& request, absl::Time now, OutputBuffer& out);
  // Appends the answer to a request the framer refused (or that the peer left incomplete).
  bool RespondHttpError(http::HttpError error, absl::Time now, OutputBuffer& out);

 private:
  // `conditional`: the GET or HEAD request whose conditional fields apply; null for POST.
  bool AnswerOcspRequest(absl::Span<const uint8_t> der, const http::HttpRequest* conditional,
                         HttpBody send_body, absl::Time now, OutputBuffer& out);
  bool AnswerHttpError(int status, absl::string_view detail, absl::Time now, OutputBuffer& out,
                       HttpBody send_body = HttpBody::kSend,
                       absl::string_view allow = kOcspAllowedMethods);

  const OcspHandlerConfig config_;
  // config_.path without its trailing '/': "" for "/", "/ocsp" for "/ocsp/".
  const std::string path_prefix_;
  // Entries are never mutated; a SIGHUP reload gives the worker a new handler (and responder)
  // over a new snapshot, and this one is freed with the last handler that holds it.
  const std::shared_ptr<const OcspSnapshot> snapshot_;
  HandlerCounters& counters_;
  std::vector<uint8_t> get_scratch_;  // decoded GET requests; sized once
  HttpResponseWriter writer_;
  absl::optional<CrlResponder> crl_responder_;  // with --crl-dir
};

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_RESPONDER_H_
