// The transport of a forwarding handler (HandlerFactory::Upstreams): one worker's connected,
// non-blocking UDP sockets, one per upstream server. Sends the datagrams a handler queued
// (UpstreamQueue) and reads what comes back, handing each datagram to a callback with the
// index of the upstream it came from. Because each socket is connect()ed, the kernel drops
// datagrams from any other source. Knows no protocol: matching replies to requests, IDs and
// deadlines are the handler's.
//
// Thread-confined to its worker; no locks.
#ifndef ONEPASS_SERVER_UPSTREAM_CHANNEL_H_
#define ONEPASS_SERVER_UPSTREAM_CHANNEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/socket_address.h"
#include "handlers/handler.h"
#include "server/scoped_fd.h"
#include "server/stats.h"
#include "server/upstream_stream_pool.h"

struct event;
struct event_base;

namespace onepass {

class UpstreamChannel {
 public:
  // Called for each datagram read: (upstream index, bytes). The bytes are valid during the
  // call only.
  using OnDatagram = std::function<void(int, absl::Span<const uint8_t>)>;

  // Opens and connects one UDP socket per address and registers it with `base` (persistent
  // readable events). Counts into `stats` (upstream_sent, _send_errors, _received), which
  // outlives it. An error names the address and the cause.
  static absl::StatusOr<std::unique_ptr<UpstreamChannel>> Open(
      event_base* base, const std::vector<SocketAddress>& upstreams, WorkerStats* stats,
      OnDatagram on_datagram);
  ~UpstreamChannel();
  UpstreamChannel(const UpstreamChannel&) = delete;
  UpstreamChannel& operator=(const UpstreamChannel&) = delete;

  // Sends every datagram of `queue` (one send each) and clears it. A datagram the kernel
  // refuses is counted and dropped: the handler's deadline answers for it.
  void Send(UpstreamQueue& queue);

  // The stream path (handlers/handler.h UpstreamStreamConfig, server/upstream_stream_pool.h):
  // pooled TCP connections to the same upstreams, opened on demand. `on_frame` gets each whole
  // frame received, as on_datagram gets datagrams. Once, after Open.
  void OpenStreams(event_base* base, const std::vector<SocketAddress>& upstreams,
                   const UpstreamStreamConfig& config, OnDatagram on_frame);
  // Sends one framed request to `upstream` on a pooled stream connection; false when dropped
  // (counted; also when OpenStreams was not called).
  bool SendStream(int upstream, absl::Span<const uint8_t> frame);

  size_t size() const { return sockets_.size(); }

 private:
  struct Socket {
    UpstreamChannel* channel = nullptr;
    int index = 0;
    ScopedFd fd;
    struct event* event = nullptr;
  };

  UpstreamChannel() = default;
  static void OnReadable(int fd, short what, void* arg);

  std::vector<std::unique_ptr<Socket>> sockets_;
  std::unique_ptr<UpstreamStreamPool> streams_;  // null without a stream path
  OnDatagram on_datagram_;
  WorkerStats* stats_ = nullptr;
  // Receive buffer: one largest UDP payload.
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(65536);
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_UPSTREAM_CHANNEL_H_
