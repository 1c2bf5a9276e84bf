// The transport of a forwarding handler (HandlerFactory::Forwarding): one worker's
// non-blocking UDP sockets to its upstream servers. Sends the datagrams a handler queued
// (UpstreamQueue) and reads what comes back, handing each datagram to a callback with the
// index of the upstream it came from. Knows no protocol: matching replies to requests, IDs and
// deadlines are the handler's.
//
// Source ports (handlers/handler.h UpstreamDatagramConfig, RFC 5452 §9.2): every socket is
// connect()ed to its upstream, so the kernel drops datagrams from any other source, and bound
// by the kernel to a random ephemeral port. A socket carries `requests_per_port` requests (by
// default one: a fresh port per request), then retires; it is closed once each of its
// requests has had its reply, or `linger` after its last one. A datagram whose key is not
// that of a request sent from the socket it arrives on, and still unanswered, is dropped
// (upstream_unexpected): an off-path forger must hit the port and the ID of one request.
// At `max_ports` open sockets per upstream (or when the kernel has no free port) a request
// goes out an open socket drawn at random (upstream_ports_shared).
//
// Thread-confined to its worker; no locks.
#ifndef ONEPASS_SERVER_UPSTREAM_UPSTREAM_CHANNEL_H_
#define ONEPASS_SERVER_UPSTREAM_UPSTREAM_CHANNEL_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/scoped_fd.h"
#include "common/secure_random.h"
#include "common/socket_address.h"
#include "handlers/handler.h"
#include "server/core/io_driver.h"
#include "server/core/stats.h"
#include "server/core/timer_queue.h"
#include "server/upstream/upstream_stream_pool.h"

namespace onepass {

class UpstreamChannel {
 public:
  // Called for each datagram taken: (upstream index, bytes). The bytes are valid during the
  // call only.
  using OnDatagram = std::function<void(int, absl::Span<const uint8_t>)>;

  // Opens and connects a first socket to each address (so that a wrong address fails here,
  // named) and watches each socket through `driver` (the worker's: either I/O driver), which
  // with `stats` (upstream_*) outlives the channel. An address of length 0 is a vacant index:
  // nothing is opened for it and what is sent to it is dropped (upstream_send_errors).
  static absl::StatusOr<std::unique_ptr<UpstreamChannel>> Open(
      IoDriver* driver, const std::vector<SocketAddress>& upstreams,
      const UpstreamDatagramConfig& config, WorkerStats* stats, OnDatagram on_datagram);
  ~UpstreamChannel();
  UpstreamChannel(const UpstreamChannel&) = delete;
  UpstreamChannel& operator=(const UpstreamChannel&) = delete;

  // Sends every datagram of `queue` (one send each) and clears it. A datagram the kernel
  // refuses is counted and dropped: the handler's deadline answers for it.
  void Send(UpstreamQueue& queue);

  // The stream path (handlers/handler.h UpstreamStreamConfig,
  // server/upstream/upstream_stream_pool.h): pooled TCP connections to the same upstreams, opened
  // on demand. `on_frame` gets each whole frame received, as on_datagram gets datagrams. Once,
  // after Open.
  void OpenStreams(const std::vector<SocketAddress>& upstreams, const UpstreamStreamConfig& config,
                   OnDatagram on_frame);
  // Sends one framed request to `upstream` on a pooled stream connection; false when dropped
  // (counted; also when OpenStreams was not called).
  bool SendStream(int upstream, absl::Span<const uint8_t> frame);

  // A reload's upstreams (ForwardingSpec::upstreams, index by index; HandlerFactory::
  // ArrangeAfter keeps the index of one that stays): an index whose address is unchanged keeps
  // its sockets and connections, and so the replies still due on them; one whose address
  // changed (or went) has its sockets and connections closed, its requests left to the
  // handler (ForwardingHandler::TakeAbandoned), and opens anew on its next request.
  void SetUpstreams(const std::vector<SocketAddress>& upstreams);

  size_t size() const { return upstreams_.size(); }
  // Sockets open to `upstream` now (current and retired).
  size_t open_ports(int upstream) const { return upstreams_[upstream].sockets.size(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Socket {
    int upstream = 0;
    uint64_t serial = 0;
    size_t member_index = 0;  // in Upstream::sockets
    ScopedFd fd;
    std::unique_ptr<FdWatch> watch;  // readable, persistent
    int sent = 0;
    bool retired = false;
    Clock::time_point last_send;
    absl::InlinedVector<uint64_t, 1> awaited;  // keys of requests sent here, not yet answered
  };
  struct Upstream {
    SocketAddress address;
    Socket* current = nullptr;     // takes new requests; null: open one on the next
    std::vector<Socket*> sockets;  // every open socket (for the random pick at the cap)
  };
  struct Linger {
    Clock::time_point at;
    uint64_t serial;
  };

  UpstreamChannel() = default;
  // A new connected socket to `upstream`, registered; null (counted) when the kernel refuses.
  absl::StatusOr<Socket*> OpenSocket(int upstream);
  // The socket the next request to `upstream` goes out of; null when none can be had.
  Socket* SocketFor(int upstream);
  void Retire(Socket* socket);
  void CloseSocket(Socket* socket);
  // Closes the sockets whose linger time has passed (a timer, every linger / 4).
  void CloseLingering(Clock::time_point now);
  void OnReadable(Socket* socket);
  void OnLingerTimer();

  IoDriver* driver_ = nullptr;
  UpstreamDatagramConfig config_;
  std::vector<Upstream> upstreams_;
  absl::flat_hash_map<uint64_t, std::unique_ptr<Socket>> sockets_;  // by serial
  uint64_t next_serial_ = 1;
  std::deque<Linger> lingering_;         // a FIFO: every linger is as long
  std::unique_ptr<Timer> linger_timer_;  // every linger / 4
  SecureRandom random_;
  std::unique_ptr<UpstreamStreamPool> streams_;  // null without a stream path
  OnDatagram on_datagram_;
  WorkerStats* stats_ = nullptr;
  // Receive buffer: one largest UDP payload.
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(65536);
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_UPSTREAM_UPSTREAM_CHANNEL_H_
