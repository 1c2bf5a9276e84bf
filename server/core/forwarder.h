// A forwarding handler's upstreams (handlers/forwarding.h: the DNS frontend's backends), as the
// worker core sees them. The core's connections queue what they forward (RequestContext::
// upstream) in the Forwarder's queue, which the core flushes after each turn; the Forwarder
// (server/upstream/upstream_dispatch.h, a target above the core) owns the sockets and hands
// each answer back through AnswerSink, which the core is.
#ifndef ONEPASS_SERVER_CORE_FORWARDER_H_
#define ONEPASS_SERVER_CORE_FORWARDER_H_

#include <cstdint>

#include "absl/types/span.h"
#include "handlers/forwarding.h"
#include "handlers/handler.h"

namespace onepass {

// Where a Forwarder delivers the answers the handler rendered.
class AnswerSink {
 public:
  virtual ~AnswerSink() = default;
  // `answer` (for connection answer.connection, when answer.matched) rendered as `bytes`.
  virtual void DeliverUpstream(const UpstreamAnswer& answer, absl::Span<const uint8_t> bytes) = 0;
};

class Forwarder {
 public:
  virtual ~Forwarder() = default;
  // Where the core's connections queue datagrams during their turns (RequestContext::upstream).
  virtual UpstreamQueue& queue() = 0;
  // Sends what is queued, and empties the queue.
  virtual void Flush() = 0;
  // The handler swap, between events: `next` (made by `factory`) takes over `previous`'s
  // requests in flight; what it cannot take is answered now, before `previous` goes.
  virtual void SwapHandler(const HandlerFactory& factory, Handler& previous, Handler& next) = 0;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_FORWARDER_H_
