// The OCSP handler: a single-shot HTTP/1.1 OCSP responder serving pre-signed responses
// (RFC 6960 over HTTP as profiled by RFC 5019 for high volume).
//
// One request per connection: the handler answers the first complete request and the server
// closes (every response says `Connection: close`; pipelined bytes after it are ignored). The
// pieces, each testable alone:
//   framer:    ParseHttpRequest (http_request_parser.h): strict RFC 9112 head + Content-Length;
//   decoder:   POST body, or the GET path decoded by DecodeGetRequestPath;
//   responder: ReadOcspRequestCertIds + OcspSnapshot::Find, written by HttpResponseWriter.
//
// What each request gets:
//   known CertID, response not expired  200, the pre-signed response + RFC 5019 §6.2 caching
//   no known CertID (or only expired)   200, OCSPResponse `unauthorized` (6) (RFC 5019 §2.2.3)
//   body/path not a DER OCSPRequest     200, OCSPResponse `malformedRequest` (1) (RFC 6960 §4.2.1)
//   not an OCSP request at all          404 wrong path, 405 (+Allow) other method, 400 bad
//                                       base64, 415 POST without application/ocsp-request,
//                                       411 POST without Content-Length
//   broken HTTP                         400/413/414/431/501/505 (see HttpError)
//   peer closed mid-request             400; nothing received at all: close silently
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_HANDLER_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_HANDLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "handlers/handler.h"
#include "handlers/ocsp/http_request_parser.h"
#include "handlers/ocsp/http_response_writer.h"
#include "handlers/ocsp/ocsp_snapshot.h"

namespace onepass::ocsp {

struct OcspHandlerConfig {
  HttpLimits http;
  // URL path the responder lives at: POST to it, GET below it ("/" serves POST / and GET /<b64>).
  std::string path = "/";
  // Pre-signed responses above this are not loaded; sizes the output buffers.
  size_t max_response_bytes = 16384;
};

// Counters of one handler (one worker); read them on the worker's thread only.
struct OcspHandlerStats {
  uint64_t presigned = 0;          // 200 with a pre-signed response
  uint64_t unauthorized = 0;       // no known, valid CertID
  uint64_t expired = 0;            // of those: a response existed but had expired at `now`
  uint64_t malformed_request = 0;  // not a DER OCSPRequest
  uint64_t http_errors = 0;        // answered with an HTTP error status
  uint64_t output_full = 0;        // response did not fit the output buffer: closed (a bug)
};

class OcspHandler : public Handler {
 public:
  // `snapshot` must not be null. `config` is copied.
  OcspHandler(const OcspHandlerConfig& config, std::shared_ptr<const OcspSnapshot> snapshot);

  // Interface
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;
  size_t MaxRequestBytes() const override;

  const OcspHandlerStats& stats() const { return stats_; }

 private:
  // Appends the answer to a complete request; false if it did not fit.
  bool Answer(const HttpRequest& request, absl::Time now, OutputBuffer& out);
  bool AnswerOcspRequest(absl::Span<const uint8_t> der, absl::Time now, OutputBuffer& out);
  bool AnswerHttpError(int status, absl::string_view detail, absl::Time now, OutputBuffer& out);
  Verdict Finish(bool appended, size_t consumed);

  const OcspHandlerConfig config_;
  // config_.path without its trailing '/': "" for "/", "/ocsp" for "/ocsp/".
  const std::string path_prefix_;
  // Held for the worker's lifetime. A reload would hand workers a new snapshot pointer (e.g. an
  // std::atomic<std::shared_ptr> in the factory read once per call); entries are never mutated.
  const std::shared_ptr<const OcspSnapshot> snapshot_;
  std::vector<uint8_t> get_scratch_;  // decoded GET requests; sized once
  HttpResponseWriter writer_;
  OcspHandlerStats stats_;
};

class OcspHandlerFactory : public HandlerFactory {
 public:
  OcspHandlerFactory(OcspHandlerConfig config, std::shared_ptr<const OcspSnapshot> snapshot);

  // Interface
  absl::string_view Name() const override { return "ocsp"; }
  std::unique_ptr<Handler> CreateHandler() const override;
  size_t OutputBufferBytes() const override;

  const OcspSnapshot& snapshot() const { return *snapshot_; }

 private:
  const OcspHandlerConfig config_;
  const std::shared_ptr<const OcspSnapshot> snapshot_;
};

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_HANDLER_H_
