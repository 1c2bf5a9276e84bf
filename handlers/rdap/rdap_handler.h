// The RDAP session glue (RFC 7480 over HTTP/1.1): the Handler the server calls, and its
// factory. One request per connection, as the OCSP handler (whose HTTP parser it shares,
// handlers/http/http_request_parser.h): the first complete request is answered and the server
// closes. The pieces, each testable alone:
//   framer:    http::ParseHttpRequest: strict RFC 9112 head; GET and HEAD carry no content;
//   responder: RdapResponder (rdap_responder.h): the query path (rdap_path.h) looked up in
//              the RdapSnapshot, whose answers were rendered at load (rdap_snapshot.h);
//   session:   this file: framing verdicts, the per-client rate limit (the Whois one,
//              whois_rate_limiter.h), close after the answer.
// HTTPS (RFC 7481 §3) is the server's --tls-listen: the handler sees the same plaintext.
#ifndef ONEPASS_HANDLERS_RDAP_RDAP_HANDLER_H_
#define ONEPASS_HANDLERS_RDAP_RDAP_HANDLER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "handlers/handler.h"
#include "handlers/rdap/rdap_responder.h"
#include "handlers/rdap/rdap_snapshot.h"
#include "handlers/whois/whois_rate_limiter.h"

namespace onepass::rdap {

// Per worker: the responder's buffers and the rate limiter's table. No per-connection state.
class RdapHandler final : public Handler {
 public:
  RdapHandler(std::shared_ptr<const RdapSnapshot> snapshot, const RdapConfig& config,
              HandlerCounters& counters);

  // Interface
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;

 private:
  Verdict Finish(bool appended, size_t consumed);
  bool Admit(const RequestContext& context);

  const http::HttpLimits limits_;
  HandlerCounters& counters_;
  RdapResponder responder_;
  whois::WhoisRateLimiter rate_limiter_;
};

class RdapHandlerFactory final : public HandlerFactory {
 public:
  RdapHandlerFactory(std::shared_ptr<const RdapSnapshot> snapshot, RdapConfig config);

  // Interface
  absl::string_view Name() const override { return "rdap"; }
  absl::Span<const CounterSpec> Counters() const override;
  // Interface: objects loaded, by kind (onepass_rdap_objects_loaded{kind="domain"}).
  std::vector<DataGauge> DataGauges() const override;
  std::unique_ptr<Handler> CreateHandler(HandlerCounters& counters) const override;
  size_t MaxRequestBytes() const override;
  size_t OutputBufferBytes() const override;
  // Interface: the objects, and the gTLD RDAP Response Profile gaps in the data.
  std::string Summary() const override;

  const RdapSnapshot& snapshot() const { return *snapshot_; }

 private:
  const std::shared_ptr<const RdapSnapshot> snapshot_;
  const RdapConfig config_;
};

}  // namespace onepass::rdap

#endif  // ONEPASS_HANDLERS_RDAP_RDAP_HANDLER_H_
