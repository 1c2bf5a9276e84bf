#include "server/xdp/serve/handler_adapter.h"

#include "absl/time/clock.h"

namespace onepass::xdp {

TcpRequestHandler::Verdict HandlerAdapter::OnRequest(std::span<const uint8_t> request,
                                                     bool peer_closed,
                                                     std::vector<uint8_t>* response,
                                                     size_t* consumed) {
  RequestContext context;
  context.now = absl::Now();
  context.keepalive = keepalive_;
  context.peer_closed = peer_closed;
  // The peer's address is not known here (all zero), as behind a proxy without a header:
  // per-client policy of handlers does not apply on this path.
  response->clear();
  size_t offset = 0;
  // Pipelined requests get their answers together, as kWriteThenRead would send them; the
  // loop ends at the first incomplete request, which stays for the TCP's next segment.
  for (int turns = 0; turns < 64; ++turns) {
    out_.Clear();
    const onepass::Verdict verdict = handler_().Process(
        absl::MakeConstSpan(request.data() + offset, request.size() - offset), context, out_);
    const absl::Span<const uint8_t> head = out_.contents();
    response->insert(response->end(), head.begin(), head.end());
    if (out_.has_body()) {
      const absl::Span<const uint8_t> body = out_.body().bytes;
      response->insert(response->end(), body.begin(), body.end());
    }
    offset += std::min(verdict.consumed, request.size() - offset);
    *consumed = offset;
    switch (verdict.action) {
      case Action::kReadMore:
        return response->empty() ? Verdict::kNeedMore : Verdict::kRespond;
      case Action::kWriteThenClose:
      case Action::kClose:
        return response->empty() ? Verdict::kClose : Verdict::kRespondThenClose;
      case Action::kWriteThenRead:
        if (verdict.consumed == 0 || offset >= request.size()) {
          return response->empty() ? Verdict::kNeedMore : Verdict::kRespond;
        }
        continue;
      case Action::kWaitUpstream:
        // Not reached: Server::CheckXdpHandler refuses --xdp with a forwarding handler. This
        // path reaches no upstream, so waiting would only hold the slot until the idle timeout.
        return Verdict::kClose;
    }
  }
  return response->empty() ? Verdict::kClose : Verdict::kRespond;
}

}  // namespace onepass::xdp
