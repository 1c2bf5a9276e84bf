// Serves the CRLs of a CrlSnapshot at /crl/NAME.crl (RFC 5280 §5 over HTTP, as CAs publish
// them at their CRL distribution points): application/pkix-crl, Last-Modified = thisUpdate,
// Expires = nextUpdate, a strong ETag (SHA-256), 304 on If-None-Match / If-Modified-Since
// (RFC 9110 §13.1), HEAD, and one byte range (RFC 9110 §14: 206, 416), honouring If-Range.
// Per worker (the Date cache); no clock, no I/O.
//
// A body of up to kCrlCopiedBodyMax bytes is copied after the head, so the response leaves in
// one send as every other; a larger one (a CA's CRL grows to megabytes) is attached to the
// output as it is (OutputBuffer::AttachBody): the server sends it from the snapshot's sealed
// file with sendfile, and no buffer holds a copy, per request or per connection.
#ifndef ONEPASS_HANDLERS_OCSP_CRL_RESPONDER_H_
#define ONEPASS_HANDLERS_OCSP_CRL_RESPONDER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"
#include "handlers/handler_counters.h"
#include "handlers/http/http_date.h"
#include "handlers/http/http_request_parser.h"
#include "handlers/ocsp/crl_snapshot.h"
#include "handlers/output_buffer.h"

namespace onepass::ocsp {

// The URL prefix of the CRLs: /crl/NAME.crl.
inline constexpr absl::string_view kCrlPathPrefix = "/crl/";
// Bodies up to this size are copied after the head (one send); larger ones are sent from the
// snapshot. About what one send of a fresh connection's window takes anyway: above it the
// response needs several sends whatever is done, and a copy costs more than the sendfile.
inline constexpr size_t kCrlCopiedBodyMax = 16 * 1024;

// A "bytes=" Range of one range-spec against a representation of `size` bytes (RFC 9110
// §14.1.2): the first and last byte, inclusive. kIgnore for a field the server may ignore
// (§14.2: another unit, several ranges, bad syntax); kUnsatisfiable for one past the end.
struct ByteRange {
  enum class Kind { kIgnore, kRange, kUnsatisfiable };
  Kind kind = Kind::kIgnore;
  uint64_t first = 0;
  uint64_t last = 0;
};
ByteRange ParseByteRange(absl::string_view field, uint64_t size);

class CrlResponder {
 public:
  CrlResponder(std::shared_ptr<const CrlSnapshot> crls, HandlerCounters& counters);

  // A GET or HEAD for `name` (the path after /crl/). Returns 0 when a response was appended,
  // -1 when it did not fit, or the error status for the caller to answer (404 no such CRL).
  int Respond(const http::HttpRequest& request, absl::string_view name, absl::Time now,
              OutputBuffer& out);

 private:
  const std::shared_ptr<const CrlSnapshot> crls_;
  HandlerCounters& counters_;
  http::HttpDateCache date_cache_;
  std::string head_;
};

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_CRL_RESPONDER_H_
