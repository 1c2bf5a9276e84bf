#include "server/xdp/serve/handler_adapter.h"

#include "absl/time/clock.h"

namespace onepass::xdp {

MappedAddress PeerAddress(const FlowKey& flow) {
  return flow.v6 ? flow.peer : MapIpv4(flow.peer.data());
}

TcpRequestHandler::Verdict HandlerAdapter::OnRequest(const TcpRequest& tcp_request,
                                                     std::vector<uint8_t>* response,
                                                     size_t* consumed) {
  const std::span<const uint8_t> request = tcp_request.bytes;
  RequestContext context;
  context.now = absl::Now();
  context.keepalive = keepalive_;
  context.peer_closed = tcp_request.peer_closed;
  // The client's address as the kernel path gives it (IPv6, or IPv4 v4-mapped), so that
  // per-client policy (Whois and RDAP rate limits) holds on this path too.
  if (tcp_request.flow != nullptr) context.peer = PeerAddress(*tcp_request.flow);
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
