// The Whois session and responder (RFC 3912): one query line in, one text reply out, close.
//
// Every reply, errors included, is a body followed by the snapshot's tail (the ">>> Last
// update of whois database" line and the terms-of-use footer), as the big registries' servers
// answer; lines end in CRLF. The whole reply is appended to the OutputBuffer in one go, so the
// server sends it in one send, and the verdict is always kWriteThenClose (RFC 3912 §2: the
// server closes after its answer; Whois has no keepalive), or kReadMore while the line is
// incomplete, or kClose for a connection that closed without asking anything.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_HANDLER_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_HANDLER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "handlers/handler.h"
#include "handlers/whois/whois_query.h"
#include "handlers/whois/whois_snapshot.h"

namespace onepass::whois {

struct WhoisConfig {
  // The longest query line accepted, without CRLF [bytes] (--whois-max-query-bytes).
  size_t max_query_bytes = 512;
};

// Builds a whole reply (body + tail) for one query line into `out`. Returns false, appending
// nothing, when it does not fit. `scratch` is the caller's reusable key buffer.
bool AppendReply(const WhoisSnapshot& snapshot, absl::string_view line, std::string* scratch,
                 OutputBuffer& out);

// Appends the reply to a query that failed framing or parsing. `detail` (may be empty) is
// appended in parentheses, e.g. libidn2's reason.
bool AppendErrorReply(const WhoisSnapshot& snapshot, QueryError error, absl::string_view detail,
                      OutputBuffer& out);

// Per worker: holds the shared snapshot and a key buffer. No per-connection state.
class WhoisHandler : public Handler {
 public:
  WhoisHandler(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config);

  // Interface
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;
  size_t MaxRequestBytes() const override { return MaxBufferedBytes(config_.max_query_bytes); }

 private:
  // A reply that does not fit `out`: a short error instead, or close when even that does not.
  Verdict TooLarge(size_t consumed, OutputBuffer& out);

  std::shared_ptr<const WhoisSnapshot> snapshot_;
  WhoisConfig config_;
  std::string scratch_;
};

class WhoisHandlerFactory : public HandlerFactory {
 public:
  WhoisHandlerFactory(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config);

  // Interface
  absl::string_view Name() const override { return "whois"; }
  std::unique_ptr<Handler> CreateHandler() const override;
  // The largest reply: the biggest object, an error or a "No match" echoing the longest query,
  // plus the tail.
  size_t OutputBufferBytes() const override;

  const WhoisSnapshot& snapshot() const { return *snapshot_; }

 private:
  // Set once at startup. A future reload would swap an atomic shared_ptr here and have
  // handlers pick up the new snapshot per call; none is wired yet.
  std::shared_ptr<const WhoisSnapshot> snapshot_;
  WhoisConfig config_;
};

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_HANDLER_H_
