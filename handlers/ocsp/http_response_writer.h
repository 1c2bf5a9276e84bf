// Builds the responder's HTTP/1.1 responses, head and body in one buffer, for one send.
//
// Every response carries `Connection: close` (the server closes after it, RFC 9112 §9.6) and a
// `Date` (RFC 9110 §6.6.1). A pre-signed OCSP response's head is mostly computed at load time
// (BuildPresignedHeadPrefix); at serve time only Date and Cache-Control's max-age are written,
// since both depend on the time of the request (RFC 5019 §6.2).
#ifndef ONEPASS_HANDLERS_OCSP_HTTP_RESPONSE_WRITER_H_
#define ONEPASS_HANDLERS_OCSP_HTTP_RESPONSE_WRITER_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "handlers/http/http_date.h"
#include "handlers/output_buffer.h"

namespace onepass::ocsp {

// OCSPResponseStatus values (RFC 6960 §4.2.1) that the responder sends without a signature.
enum class OcspResponseStatus : uint8_t {
  kMalformedRequest = 1,
  kUnauthorized = 6,
};

// Upper bound on what serving adds to a BuildPresignedHeadPrefix() head (Date, Cache-Control).
inline constexpr size_t kMaxDynamicHeadBytes = 160;

// The interim response to `Expect: 100-continue` (RFC 9110 §15.2.1).
inline constexpr absl::string_view kHttpContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// Whether a response carries its content: HEAD gets the same head as GET and no content
// (RFC 9110 §9.3.2).
enum class HttpBody { kSend, kOmit };

// The head of a 200 for a pre-signed response, up to and excluding the Date field:
//   HTTP/1.1 200 OK, Content-Type: application/ocsp-response, Content-Length,
//   Last-Modified (= thisUpdate), Expires (= nextUpdate, when given), ETag, Connection: close.
std::string BuildPresignedHeadPrefix(size_t body_size, absl::Time this_update,
                                     absl::optional<absl::Time> next_update,
                                     absl::string_view etag);

// The head of a 304 for the same response, up to and excluding Date: the fields RFC 9110
// §15.4.5 requires a 304 to repeat from the 200 (ETag, Expires; Cache-Control and Date are
// added per request), Connection: close. No Last-Modified: the ETag is there.
std::string BuildNotModifiedHeadPrefix(absl::optional<absl::Time> next_update,
                                       absl::string_view etag);

// Per-worker (thread-confined): it caches the Date field.
// The methods a 405 lists in Allow, by path.
inline constexpr absl::string_view kOcspAllowedMethods = "GET, HEAD, POST";
inline constexpr absl::string_view kCrlAllowedMethods = "GET, HEAD";

class HttpResponseWriter {
 public:
  // Appends the pre-signed response: `head_prefix` from BuildPresignedHeadPrefix, then Date,
  // Cache-Control: max-age=<nextUpdate - now, >= 0>, public, no-transform, must-revalidate
  // (RFC 5019 §6.2; max-age=0 without a nextUpdate), then `body`. False (and nothing appended)
  // when it does not fit.
  bool AppendPresigned(absl::string_view head_prefix, absl::string_view body,
                       absl::optional<absl::Time> next_update, absl::Time now, OutputBuffer& out,
                       HttpBody send_body = HttpBody::kSend);

  // Appends a 304 Not Modified (RFC 9110 §15.4.5): `head_prefix` from
  // BuildNotModifiedHeadPrefix, Date and the same Cache-Control as AppendPresigned, no content.
  bool AppendNotModified(absl::string_view head_prefix, absl::optional<absl::Time> next_update,
                         absl::Time now, OutputBuffer& out);

  // Appends a 200 whose body is the unsigned OCSPResponse carrying only `status` (RFC 6960
  // §4.2.1: "responseBytes" is absent for these), with Cache-Control: no-store.
  bool AppendOcspStatus(OcspResponseStatus status, absl::Time now, OutputBuffer& out,
                        HttpBody send_body = HttpBody::kSend);

  // Appends an HTTP error: `status` with its reason phrase and a one-line text/plain body
  // "<status> <reason>: <detail>". 405 also carries `Allow: <allow>` (RFC 9110 §15.5.6): the
  // OCSP paths take POST too (RFC 6960 §A.1), a CRL path only GET and HEAD.
  bool AppendHttpError(int status, absl::string_view detail, absl::Time now, OutputBuffer& out,
                       HttpBody send_body = HttpBody::kSend,
                       absl::string_view allow = kOcspAllowedMethods);

 private:
  http::HttpDateCache date_cache_;
};

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_HTTP_RESPONSE_WRITER_H_
