// The forwarding half of the handler contract (handlers/handler.h): what a handler that sends
// requests on to upstream servers (the DNS frontend, --dns-backend) needs beyond Process, and
// what its factory tells the server about those upstreams. A protocol that answers everything
// itself never sees any of this.
//
// The server owns every upstream socket and knows no protocol: during Process the handler
// queues datagrams in the worker's UpstreamQueue (RequestContext::upstream) and answers
// Action::kWaitUpstream; the server sends them, and hands back every datagram (or stream
// frame) it receives and, every tick, the time (ForwardingHandler). The handler matches
// replies to requests, keeps the deadlines and the upstreams' health, and names the connection
// each answer is for.
#ifndef ONEPASS_HANDLERS_FORWARDING_H_
#define ONEPASS_HANDLERS_FORWARDING_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/socket_address.h"
#include "handlers/output_buffer.h"

namespace onepass {

// Datagrams a forwarding handler queues for its upstream servers during one Process call, each
// with the index of the upstream (ForwardingSpec::upstreams order) it goes to. The server owns
// it (one per worker), sends its datagrams on its connected per-worker UDP socket of that
// upstream right after the call, and clears it. Fixed-size storage, reused: no allocation.
class UpstreamQueue {
 public:
  static constexpr size_t kMaxDatagrams = 512;
  static constexpr size_t kMaxBytes = 1 << 20;

  struct Datagram {
    int upstream = 0;
    size_t offset = 0;
    size_t size = 0;
  };

  UpstreamQueue() : bytes_(kMaxBytes) { datagrams_.reserve(kMaxDatagrams); }

  // Room for one more datagram of `size` bytes.
  bool HasRoom(size_t size) const {
    return datagrams_.size() < kMaxDatagrams && used_ + size <= bytes_.size();
  }
  // Queues `datagram` for `upstream`; false (nothing queued) without room.
  bool Push(int upstream, absl::Span<const uint8_t> datagram) {
    if (!HasRoom(datagram.size())) return false;
    std::copy(datagram.begin(), datagram.end(), bytes_.begin() + used_);
    datagrams_.push_back({upstream, used_, datagram.size()});
    used_ += datagram.size();
    return true;
  }
  size_t size() const { return datagrams_.size(); }
  bool empty() const { return datagrams_.empty(); }
  int upstream(size_t i) const { return datagrams_[i].upstream; }
  absl::Span<const uint8_t> bytes(size_t i) const {
    return {bytes_.data() + datagrams_[i].offset, datagrams_[i].size};
  }
  void Clear() {
    datagrams_.clear();
    used_ = 0;
  }

 private:
  std::vector<uint8_t> bytes_;
  size_t used_ = 0;
  std::vector<Datagram> datagrams_;
};

// What a forwarding handler tells the server about one upstream datagram it was handed, or
// about one expired request (ForwardingHandler::TakeUpstreamReply, TakeExpired).
struct UpstreamAnswer {
  // The datagram answered a request: `connection` (RequestContext::connection of the call
  // that queued it) gets the bytes appended to the server's answer buffer. False: dropped (a
  // forged, late or malformed datagram, counted by the handler), nothing appended.
  bool matched = false;
  uint64_t connection = 0;
  // Instead of an answer, the handler put one framed request in `out` to be sent over a
  // stream (ForwardingSpec::streams) to `upstream`: from TakeUpstreamReply (the
  // upstream the datagram came from, e.g. a DNS reply with TC=1 retried over TCP) or from
  // TakeExpired (a request unanswered over UDP for a while). `matched` is false then: no
  // client is answered yet.
  bool resend_over_stream = false;
  int upstream = -1;  // TakeExpired only; TakeUpstreamReply's is the datagram's
};

// The datagram path of a forwarding handler (ForwardingSpec::datagrams): how each
// worker spreads its requests over UDP source ports, against off-path forgery (RFC 5452 §9.2:
// an attacker must guess the port as well as the ID). Each socket is connected to its upstream
// (the kernel drops datagrams from other sources) and bound by the kernel to a random
// ephemeral port; it carries `requests_per_port` requests, then is retired (no new requests)
// and closed once every request sent on it has its reply, or `linger` after its last request.
// A reply is taken only on the socket its request left from: its key (request_key) must be
// one sent there and not yet answered; any other datagram is dropped and counted.
struct UpstreamDatagramConfig {
  // The key pairing a request datagram with its reply (DNS: the message ID); any value for a
  // datagram too short to hold one. Pure. nullptr: replies are not checked per socket.
  using RequestKey = uint64_t (*)(absl::Span<const uint8_t> datagram);
  RequestKey request_key = nullptr;
  // Requests per source port before it is retired; 1: a fresh port for every request.
  int requests_per_port = 1;
  // Sockets open per upstream per worker at most. At the cap, or when the kernel has no port
  // to give, a request goes out a socket already open, drawn at random.
  int max_ports = 512;
  // A retired socket still awaiting replies is closed this long after its last request.
  absl::Duration linger = absl::Seconds(2);
};

// The stream path of a forwarding handler (ForwardingSpec::streams): each worker keeps
// a small pool of connections (TCP) per upstream, opened on demand, reused across requests,
// several requests in flight on each (RFC 7766 §6.2.1.1 pipelining: answers may come back in
// any order, and matching them to requests is the handler's), reopened on the next request
// after a close or an error. The server knows no protocol: the handler hands it requests
// already framed and tells it where an answer ends (frame_length).
struct UpstreamStreamConfig {
  // The length of the first whole message at the front of `bytes`, framing included; 0 while
  // it is incomplete; -1 when `bytes` cannot start a message (the server closes the
  // connection). Pure. nullptr: the handler has no stream path.
  using FrameLength = ptrdiff_t (*)(absl::Span<const uint8_t> bytes);
  FrameLength frame_length = nullptr;
  // The largest frame an upstream may send; a longer one closes the connection.
  size_t max_frame_bytes = 0;
  // Connections per upstream per worker at most; a new one opens only while every open one has
  // requests outstanding.
  int connections = 2;
  // An open connection without requests outstanding is closed after this long.
  absl::Duration idle_timeout = absl::Seconds(10);
  // A connect that takes longer, or a connection with requests outstanding that receives
  // nothing for this long, is closed (the handler's own deadline answers its requests).
  absl::Duration io_timeout = absl::Seconds(1);
  // The key that pairs a request frame with its answer frame (DNS: the message ID), from a
  // whole frame, framing included; any value for a frame too short to hold one. Pure. With it
  // the server keeps a copy of each request until a frame with its key comes back on the same
  // connection, and sends the requests a connection lost (EOF, reset, a frame the framer
  // rejects, a failed connect) once more, unchanged, on another pooled connection; a request
  // lost a second time is left to the handler's deadline. nullptr: nothing is sent again.
  using RequestKey = uint64_t (*)(absl::Span<const uint8_t> frame);
  RequestKey request_key = nullptr;
};

// What a forwarding handler's factory tells the server (HandlerFactory::Forwarding).
struct ForwardingSpec {
  // The upstream servers, in the order UpstreamQueue indexes them. Each worker sends to them
  // from connected UDP sockets as `datagrams` says.
  std::vector<SocketAddress> upstreams;
  UpstreamDatagramConfig datagrams;
  // How often the server calls ForwardingHandler::TakeExpired (the granularity of deadlines).
  absl::Duration tick_period = absl::Milliseconds(10);
  // The stream path to the same upstreams; none when frame_length is null.
  UpstreamStreamConfig streams;
};

// A question a forwarding factory asks one upstream once, before serving and in --check
// (HandlerFactory::StartupProbes): about how the upstream is configured, not whether it is up
// (the workers' health probes say that). The server sends `request` as one UDP datagram from a
// socket connected to `upstream` (the kernel drops datagrams from elsewhere), waits a short
// bounded time for the first datagram back, and gives it to `judge`, which returns a warning
// for the operator or nothing. No reply, or an error, is not a warning: the judge is not asked.
struct StartupProbe {
  SocketAddress upstream;
  std::vector<uint8_t> request;
  // Pure; called on the main thread at most once. Must check that `reply` answers `request`
  // (an off-path datagram can reach the socket): nothing for one that does not.
  std::function<std::optional<std::string>(absl::Span<const uint8_t> reply)> judge;
};

// The forwarding half of one worker's handler (Handler::forwarding). Same thread and lifetime
// rules as the Handler it belongs to.
class ForwardingHandler {
 public:
  virtual ~ForwardingHandler() = default;

  // A datagram received from upstream `upstream` at `now`: appends the answer for the client
  // (a whole response, framed) to `out` and says which connection it is for, or drops it.
  // `out` is the server's per-worker answer buffer, empty on entry, with room for one largest
  // response.
  virtual UpstreamAnswer TakeUpstreamReply(int upstream, absl::Span<const uint8_t> datagram,
                                           absl::Time now, OutputBuffer& out) = 0;
  // With a stream path only (ForwardingSpec::streams). One whole frame (as
  // UpstreamStreamConfig::frame_length measured it, framing included) received on a stream
  // connection to upstream `upstream`: as TakeUpstreamReply.
  virtual UpstreamAnswer TakeUpstreamStreamReply(int upstream, absl::Span<const uint8_t> frame,
                                                 absl::Time now, OutputBuffer& out) {
    return {};
  }
  // Called by the server every tick_period with the time: answers one request whose deadline
  // has passed (appending the response for its client to `out`, as TakeUpstreamReply does)
  // and returns true, or returns false when none is left. May also queue datagrams (health
  // probes) in `probes`.
  virtual bool TakeExpired(absl::Time now, OutputBuffer& out, UpstreamAnswer& answer,
                           UpstreamQueue& probes) = 0;
  // Called once by the worker on a reload, before this handler sees its first request, with
  // the one it replaces: the requests in flight (else their clients would wait for the
  // server's backstop), the upstreams' health and a cache carry over where they still apply.
  virtual void TakeOver(ForwardingHandler& previous) = 0;
  // After TakeOver, on the replaced handler: answers one request it still holds (one TakeOver
  // could not carry over, e.g. to an upstream the new data no longer lists) at once, as an
  // expiry, and returns true; false when none is left. The server delivers each before the
  // replaced handler is destroyed, so no client waits for an upstream that is gone.
  virtual bool TakeAbandoned(absl::Time now, OutputBuffer& out, UpstreamAnswer& answer) = 0;
};

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_FORWARDING_H_
