// The worker's Handler (handlers/handler.h) as the AF_XDP path's TcpRequestHandler: the same
// handler object the worker's kernel connections use, so an answer over AF_XDP is the answer
// over a kernel socket, byte for byte. With --keepalive-ms the handler sees it as over a kernel
// socket (RequestContext::keepalive: DNS keeps the connection, and echoes edns-tcp-keepalive)
// and the TCP keeps the connection for the next request; without, kWriteThenClose. No upstream:
// RequestContext::upstream stays null, and Server::CheckXdpHandler refuses --xdp with a handler
// that forwards (--dns-backend), since the XDP program takes every segment of the port and the
// kernel's listener never sees those clients; a kWaitUpstream that came anyway closes the
// connection.
#ifndef ONEPASS_SERVER_XDP_SERVE_HANDLER_ADAPTER_H_
#define ONEPASS_SERVER_XDP_SERVE_HANDLER_ADAPTER_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "absl/time/time.h"
#include "common/address_prefix.h"
#include "handlers/handler.h"
#include "handlers/output_buffer.h"
#include "server/xdp/tcp/tcp_endpoint.h"

namespace onepass::xdp {

// `flow`'s peer as RequestContext::peer has it: IPv6, or IPv4 as v4-mapped IPv6.
MappedAddress PeerAddress(const FlowKey& flow);

class HandlerAdapter : public TcpRequestHandler {
 public:
  // `handler` returns the worker's handler of the moment (a SIGHUP reload swaps it);
  // `output_bytes`: the worker's output buffer size (HandlerFactory::OutputBufferBytes fits);
  // `keepalive`: --keepalive-ms (TcpEndpointConfig::keepalive_ms, the same).
  HandlerAdapter(std::function<Handler&()> handler, size_t output_bytes, absl::Duration keepalive)
      : handler_(std::move(handler)), out_(output_bytes), keepalive_(keepalive) {}

  // TcpRequestHandler
  Verdict OnRequest(const TcpRequest& request, std::vector<uint8_t>* response,
                    size_t* consumed) override;

 private:
  std::function<Handler&()> handler_;
  OutputBuffer out_;  // reused: nothing allocated per request
  absl::Duration keepalive_;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_SERVE_HANDLER_ADAPTER_H_
