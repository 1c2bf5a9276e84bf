#include "server/xdp/serve/xdp_queue.h"

#include <linux/if_xdp.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <chrono>
#include <utility>

#include "server/core/worker_metrics.h"

namespace onepass::xdp {
namespace {

// The TCP's timers run on this tick while it holds connections: its first retransmission
// timeout is 200 ms, so a retransmission leaves at most a tick late. A queue without
// connections arms no tick; stats_tick_ (the kernel's drops, once a second) runs always.
constexpr uint64_t kTickMs = 20;

// [ms] the TCP's clock: the worker's monotonic clock.
uint64_t NowMs() { return static_cast<uint64_t>(MonotonicNanos()) / 1'000'000; }

XdpStatsSnapshot Summarize(const TcpStats& tcp, const XskStats& xsk) {
  XdpStatsSnapshot s;
  s.packets_in = tcp.frames_in;
  s.packets_out = xsk.tx_frames;
  s.connections = tcp.connections_established;
  s.requests = tcp.requests;
  s.retransmissions = tcp.retransmissions;
  s.rsts_sent = tcp.rsts_sent;
  s.drops = tcp.not_ours + tcp.malformed + tcp.checksum_bad + tcp.cookies_bad + tcp.table_full +
            tcp.per_client_limited + tcp.paws_dropped + xsk.tx_no_frame + xsk.tx_too_large;
  s.timeouts = tcp.timeouts;
  s.keepalive_closes = tcp.keepalive_closes;
  s.data_after_close = tcp.data_after_close;
  s.kick_errors = xsk.kick_errors;
  return s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<XdpQueue>> XdpQueue::Open(const XdpQueueOptions& options,
                                                         IoDriver* driver,
                                                         std::function<Handler&()> handler) {
  absl::StatusOr<std::unique_ptr<XskSocket>> xsk =
      XskSocket::Open({.ifname = options.ifname, .queue = options.queue});
  if (!xsk.ok()) return xsk.status();
  TcpEndpointConfig config;
  config.ports = options.ports;
  config.request_bound = options.request_bound;
  config.idle_timeout_ms = options.idle_timeout_ms;
  config.keepalive_ms = options.keepalive_ms;
  config.table = {.max_connections = options.max_connections,
                  .per_client_max = options.per_client_max};
  // A key of this process: cookies of a previous run (or another queue's) do not validate.
  if (getrandom(config.cookie_key.data(), config.cookie_key.size(), 0) !=
      static_cast<ssize_t>(config.cookie_key.size())) {
    return absl::InternalError("getrandom failed for the SYN cookie key");
  }
  return std::unique_ptr<XdpQueue>(
      new XdpQueue(*std::move(xsk), config, driver, std::move(handler), options.output_bytes));
}

XdpQueue::XdpQueue(std::unique_ptr<XskSocket> xsk, const TcpEndpointConfig& config,
                   IoDriver* driver, std::function<Handler&()> handler, size_t output_bytes)
    : xsk_(std::move(xsk)),
      sink_(xsk_.get()),
      adapter_(std::move(handler), output_bytes, absl::Milliseconds(config.keepalive_ms)),
      endpoint_(config, &adapter_, &sink_),
      watch_(driver, [this] { OnReadable(); }),
      tick_(&driver->timers(), [this] { OnTick(); }),
      stats_tick_(&driver->timers(), [this] { OnStatsTick(); }) {
  watch_.Arm(xsk_->fd(), Interest::kReadable, /*persistent=*/true);
  stats_tick_.ArmAt(std::chrono::steady_clock::now() + std::chrono::seconds(1));
}

void XdpQueue::OnStatsTick() {
  xdp_statistics kernel{};
  socklen_t length = sizeof(kernel);
  if (getsockopt(xsk_->fd(), SOL_XDP, XDP_STATISTICS, &kernel, &length) == 0) {
    ring_drops_ = kernel.rx_dropped + kernel.rx_ring_full + kernel.rx_invalid_descs;
  }
  AfterEvents();
  stats_tick_.ArmAt(std::chrono::steady_clock::now() + std::chrono::seconds(1));
}

void XdpQueue::OnReadable() {
  const size_t n = xsk_->Receive(frames_);
  const uint64_t now = NowMs();
  // Frames the program steered are all TCP to our ports; what OnFrame refuses is not a
  // segment of ours (counted by the endpoint) and has nowhere else to go.
  for (size_t i = 0; i < n; ++i) endpoint_.OnFrame(frames_[i].bytes, now);
  xsk_->Release(std::span(frames_.data(), n));
  AfterEvents();
}

void XdpQueue::OnTick() {
  endpoint_.OnTimer(NowMs());
  AfterEvents();
}

void XdpQueue::BeginDrain(std::function<void()> drained) {
  drained_ = std::move(drained);
  endpoint_.BeginDrain(NowMs());
  AfterEvents();
}

void XdpQueue::AfterEvents() {
  xsk_->Flush();
  XdpStatsSnapshot snapshot = Summarize(endpoint_.stats(), xsk_->stats());
  snapshot.ring_drops = ring_drops_;
  counters_.Store(snapshot);
  if (endpoint_.connections() > 0 && !tick_.armed()) {
    tick_.ArmAt(std::chrono::steady_clock::now() + std::chrono::milliseconds(kTickMs));
  }
  if (drained_ && endpoint_.connections() == 0) std::exchange(drained_, nullptr)();
}

}  // namespace onepass::xdp
