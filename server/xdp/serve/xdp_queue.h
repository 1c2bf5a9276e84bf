// One (interface, rx queue) of the AF_XDP path, served inside the event loop of the worker of
// that queue (RSS queue k -> worker k, as for the kernel's sockets): the AF_XDP socket's fd is
// one more FdWatch of the worker's I/O driver and the TCP's deadlines one more Timer of its
// TimerQueue. So the path runs on the worker's thread, pinned to its CPU, with the worker's own
// handler (HandlerAdapter), and needs no thread, lock or mailbox of its own; a reload reaches
// it as it reaches the worker's connections.
//
// Thread-confined to the worker after Open (on the main thread before the worker runs, or on the
// worker's thread after a hand-over: Worker::OfferXdp).
#ifndef ONEPASS_SERVER_XDP_SERVE_XDP_QUEUE_H_
#define ONEPASS_SERVER_XDP_SERVE_XDP_QUEUE_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "handlers/handler.h"
#include "server/core/io_driver.h"
#include "server/core/timer_queue.h"
#include "server/xdp/af_xdp/xsk_socket.h"
#include "server/xdp/serve/handler_adapter.h"
#include "server/xdp/serve/xdp_counters.h"
#include "server/xdp/tcp/tcp_endpoint.h"

namespace onepass::xdp {

struct XdpQueueOptions {
  std::string ifname;
  uint32_t queue = 0;
  std::vector<uint16_t> ports;  // the plain --listen ports
  size_t output_bytes = 0;      // the worker's output buffer (a whole answer)
  size_t request_bound = 65535;
  uint64_t idle_timeout_ms = 10'000;  // --read-timeout-ms
  uint64_t keepalive_ms = 0;          // --keepalive-ms (the handler's default when not given)
  // The TCP's table: a slot lives from the handshake's ACK to the peer's FIN (or the idle
  // deadline), so these bound what the kernel's accept queue plus orphans would hold.
  size_t max_connections = 1024;  // the worker's share of --max-connections
  size_t per_client_max = 16;     // --max-connections-per-client
};

class XdpQueue {
 public:
  // Opens the AF_XDP socket; the caller registers fd() with the interface's XdpProgram.
  static absl::StatusOr<std::unique_ptr<XdpQueue>> Open(const XdpQueueOptions& options,
                                                        IoDriver* driver,
                                                        std::function<Handler&()> handler);
  XdpQueue(const XdpQueue&) = delete;
  XdpQueue& operator=(const XdpQueue&) = delete;

  int fd() const { return xsk_->fd(); }
  const XdpCounters& counters() const { return counters_; }
  size_t connections() const { return endpoint_.connections(); }

  // The worker drains (WorkerCore::BeginDrain; the XDP program stops sending new connections:
  // XdpProgram::BeginDrain): what the TCP kept alive gets our FIN, what is under way is
  // answered (TcpEndpoint::BeginDrain). `drained` runs once, when the last connection has gone
  // (at once when there is none).
  void BeginDrain(std::function<void()> drained);

 private:
  XdpQueue(std::unique_ptr<XskSocket> xsk, const TcpEndpointConfig& config, IoDriver* driver,
           std::function<Handler&()> handler, size_t output_bytes);
  void OnReadable();
  void OnTick();
  void AfterEvents();  // flush, publish counters, the next tick
  void OnStatsTick();  // the kernel's drops, once a second (a syscall: not per batch)

  class Sink : public TcpFrameSink {
   public:
    explicit Sink(XskSocket* xsk) : xsk_(xsk) {}
    void Send(std::span<const uint8_t> frame) override { xsk_->Send(frame); }

   private:
    XskSocket* xsk_;
  };

  std::unique_ptr<XskSocket> xsk_;
  Sink sink_;
  HandlerAdapter adapter_;
  TcpEndpoint endpoint_;
  XdpCounters counters_;
  std::array<XskFrame, 64> frames_;
  uint64_t ring_drops_ = 0;
  std::function<void()> drained_;  // BeginDrain's, until it has run
  // Last: they call back into the members above.
  FdWatch watch_;
  Timer tick_;
  Timer stats_tick_;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_SERVE_XDP_QUEUE_H_
