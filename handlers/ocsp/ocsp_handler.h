// The OCSP session glue: the Handler the server calls, and its factory. A single-shot HTTP/1.1
// OCSP responder serving pre-signed responses (RFC 6960 over HTTP as profiled by RFC 5019 for
// high volume).
//
// One request per connection: the handler answers the first complete request and the server
// closes (every response says `Connection: close`; pipelined bytes after it are ignored). The
// pieces, each testable alone:
//   framer:    http::ParseHttpRequest (http_request_parser.h): strict RFC 9112 head +
//   Content-Length; responder: OcspResponder (ocsp_responder.h): path and method, the POST body or
//   the GET path
//              (get_request_decoder.h), CertIDs (ocsp_request_reader.h) looked up in the
//              OcspSnapshot, the answer written by HttpResponseWriter;
//   session:   this file: framing verdicts, peer closed mid-request (400; nothing received at
//              all: close silently), close after the answer.
#ifndef ONEPASS_HANDLERS_OCSP_OCSP_HANDLER_H_
#define ONEPASS_HANDLERS_OCSP_OCSP_HANDLER_H_

#include <memory>

#include "absl/types/span.h"
#include "handlers/handler.h"
#include "handlers/ocsp/ocsp_responder.h"
#include "handlers/ocsp/ocsp_snapshot.h"

namespace onepass::ocsp {

class OcspHandler final : public Handler {
 public:
  // `snapshot` must not be null. `config` is copied. `counters` holds kOcspCounters.
  OcspHandler(const OcspHandlerConfig& config, std::shared_ptr<const OcspSnapshot> snapshot,
              HandlerCounters& counters);

  // Interface
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;

 private:
  Verdict Finish(bool appended, size_t consumed);

  const http::HttpLimits limits_;
  HandlerCounters& counters_;
  OcspResponder responder_;
};

class OcspHandlerFactory final : public HandlerFactory {
 public:
  OcspHandlerFactory(OcspHandlerConfig config, std::shared_ptr<const OcspSnapshot> snapshot);

  // Interface
  absl::string_view Name() const override { return "ocsp"; }
  absl::Span<const CounterSpec> Counters() const override;
  // Interface: responses and CertIDs loaded, and the earliest nextUpdate among them.
  std::vector<DataGauge> DataGauges() const override;
  std::unique_ptr<Handler> CreateHandler(HandlerCounters& counters) const override;
  size_t MaxRequestBytes() const override;
  size_t OutputBufferBytes() const override;
  std::string Summary() const override;

  const OcspSnapshot& snapshot() const { return *snapshot_; }

 private:
  const OcspHandlerConfig config_;
  const std::shared_ptr<const OcspSnapshot> snapshot_;
};

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_OCSP_HANDLER_H_
