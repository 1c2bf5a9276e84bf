// The Whois session glue (RFC 3912): the Handler the server calls, and its factory.
//
// One query line in, one text reply out, close. The pieces, each testable alone:
//   framer:    FrameQuery (whois_framer.h): the query line, or why there is none;
//   responder: WhoisResponder (whois_responder.h): ParseQuery (whois_query.h), the lookup in
//              the WhoisSnapshot and the reply;
//   session:   this file: the per-client rate limit (whois_rate_limiter.h), the verdicts. The reply
//   goes out in one send and the verdict is
//              always kWriteThenClose (RFC 3912 §2: the server closes after its answer; Whois
//              has no keepalive), or kReadMore while the line is incomplete, or kClose for a
//              connection that closed without asking anything.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_HANDLER_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_HANDLER_H_

#include <cstddef>
#include <memory>

#include "absl/types/span.h"
#include "handlers/handler.h"
#include "handlers/whois/whois_rate_limiter.h"
#include "handlers/whois/whois_responder.h"
#include "handlers/whois/whois_snapshot.h"

namespace onepass::whois {

// Per worker: holds the responder (shared snapshot, key buffer). No per-connection state.
class WhoisHandler final : public Handler {
 public:
  WhoisHandler(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config,
               HandlerCounters& counters);

  // Interface
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;

 private:
  // A reply that does not fit `out`: a short error instead, or close when even that does not.
  Verdict TooLarge(size_t consumed, OutputBuffer& out);
  // Counts the query against the client's rate; false when it must be refused.
  bool Admit(const RequestContext& context);
  // The refusal (whois_responder.h) and the close.
  Verdict RateLimited(size_t consumed, OutputBuffer& out);

  const size_t max_query_bytes_;
  HandlerCounters& counters_;
  WhoisResponder responder_;
  // Per worker, like the handler: the limit holds per worker (whois_rate_limiter.h).
  WhoisRateLimiter rate_limiter_;
};

class WhoisHandlerFactory final : public HandlerFactory {
 public:
  WhoisHandlerFactory(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config);

  // Interface
  absl::string_view Name() const override { return "whois"; }
  absl::Span<const CounterSpec> Counters() const override;
  // Interface: objects loaded, by kind (onepass_whois_objects_loaded{kind="domain"}).
  std::vector<DataGauge> DataGauges() const override;
  std::unique_ptr<Handler> CreateHandler(HandlerCounters& counters) const override;
  size_t MaxRequestBytes() const override;
  // The largest reply (MaxReplyBodyBytes) plus the tail.
  size_t OutputBufferBytes() const override;
  std::string Summary() const override;

  const WhoisSnapshot& snapshot() const { return *snapshot_; }

 private:
  // Set at construction; a SIGHUP reload builds a new factory over a new snapshot.
  std::shared_ptr<const WhoisSnapshot> snapshot_;
  WhoisConfig config_;
};

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_HANDLER_H_
