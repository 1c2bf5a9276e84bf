// The handler interface: the only thing the server knows about a protocol.
//
// A handler is bytes in, a verdict and response bytes out. It never sees a socket, a timer, a
// thread or the clock: the server owns every syscall and passes the time in. That keeps each
// protocol testable with plain byte strings (tests/unit/handlers/...).
//
// Every protocol in handlers/<p>/ has one shape, the template for the next one: a framer
// (bytes -> incomplete | frame | invalid; <p>_framer, or the HTTP protocols'
// handlers/http/http_request_parser), a responder over an immutable snapshot (<p>_responder), the
// session glue that is the Handler and its factory (<p>_handler), the counters it exports
// (<p>_counters.h), all in library <p>_core; and the flags building the factory (<p>_flags, library
// <p>, used by registry.cc).
//
// Lifetimes and threads:
//  - A HandlerFactory is built from the protocol's data (zone, OCSP responses, Whois database)
//    at startup and again on each SIGHUP reload: an immutable snapshot shared by all workers,
//    freed when the last worker lets go of it. It is thread-safe.
//  - Each worker asks the factory for its own Handler and uses it only on its own thread, so a
//    Handler may keep per-worker scratch space without locks. It counts what it answered into
//    the worker's HandlerCounters block (handlers/handler_counters.h), which outlives it.
//  - A Handler keeps no per-connection state between calls: everything it needs is in the
//    unconsumed input bytes the server hands back. That is what lets the server take a
//    connection from accept to close in one pass with no per-connection allocation.
#ifndef ONEPASS_HANDLERS_HANDLER_H_
#define ONEPASS_HANDLERS_HANDLER_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/socket_address.h"
#include "handlers/handler_counters.h"
#include "handlers/load_phases.h"
#include "handlers/output_buffer.h"

namespace onepass {

// What the server does with the connection after Handler::Process.
enum class Action {
  // No complete request at the front of the input (and nothing appended): read more bytes,
  // within the read timeout and up to HandlerFactory::MaxRequestBytes() of buffered
  // input.
  kReadMore,
  // Send what was appended to `out`, then keep reading requests on this connection. Used for
  // keepalive (RFC 7766 §6.2.3) and when the handler stopped early because `out` was full:
  // after the send completes the server calls Process again on the unconsumed input before
  // waiting for more bytes, if this call consumed any. A call that consumed nothing is not
  // repeated on the same bytes (it would get the same answer): the server waits for more.
  // That is how an interim response goes out (HTTP 100 Continue, RFC 9110 §15.2.1).
  kWriteThenRead,
  // Send what was appended to `out` (in one send), then close: the single pass.
  kWriteThenClose,
  // Close at once without sending anything: the input cannot be answered in the protocol
  // (e.g. a DNS message too short to hold a header). `out` is ignored.
  kClose,
  // A forwarding handler (HandlerFactory::Upstreams non-empty) queued datagrams for upstream
  // servers in RequestContext::upstream, one per request it could not answer itself. The
  // server sends what is in `out` (answers it had at once), sends the datagrams, and parks the
  // connection in kWaitingUpstream until the handler has delivered one answer per datagram
  // (Handler::TakeUpstreamReply, Handler::TakeExpired); then it does what Verdict::then says.
  // The connection reads nothing meanwhile: that bounds what one client has in flight.
  kWaitUpstream,
};

struct Verdict {
  Action action = Action::kReadMore;
  // Bytes at the front of the input that are done with; the server drops them before the next
  // call. Always <= input.size(). With kWriteThenClose, consumed < input.size() also tells the
  // server that the client may still be sending (an answer before the end of the request):
  // it then closes gracefully (server/: lingering close) so that the answer is not reset.
  // So a handler consumes exactly what it parsed, never "everything it was given".
  size_t consumed = 0;
  // With kWaitUpstream only: once every upstream answer of this connection is sent,
  // kWriteThenClose closes (gracefully, as above) and kWriteThenRead goes on reading requests.
  Action then = Action::kWriteThenClose;
};

// Datagrams a forwarding handler queues for its upstream servers during one Process call, each
// with the index of the upstream (HandlerFactory::Upstreams order) it goes to. The server owns
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
// about one expired request (Handler::TakeUpstreamReply, Handler::TakeExpired).
struct UpstreamAnswer {
  // The datagram answered a request: `connection` (RequestContext::connection of the call
  // that queued it) gets the bytes appended to the server's answer buffer. False: dropped (a
  // forged, late or malformed datagram, counted by the handler), nothing appended.
  bool matched = false;
  uint64_t connection = 0;
  // Instead of an answer, the handler put one framed request in `out` to be sent over a
  // stream (HandlerFactory::UpstreamStreams) to `upstream`: from TakeUpstreamReply (the
  // upstream the datagram came from, e.g. a DNS reply with TC=1 retried over TCP) or from
  // TakeExpired (a request unanswered over UDP for a while). `matched` is false then: no
  // client is answered yet.
  bool resend_over_stream = false;
  int upstream = -1;  // TakeExpired only; TakeUpstreamReply's is the datagram's
};

// The datagram path of a forwarding handler (HandlerFactory::UpstreamDatagrams): how each
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

// The stream path of a forwarding handler (HandlerFactory::UpstreamStreams): each worker keeps
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

// What a handler may know about the request beyond its bytes. Passed by the server per call.
struct RequestContext {
  // Wall-clock time of this call; handlers never read the clock themselves.
  absl::Time now;
  // How long the server keeps an idle connection open for further requests. Zero (the default)
  // means the server closes after the response: handlers then answer with kWriteThenClose.
  // Non-zero lets handlers that support it answer with kWriteThenRead (and lets DNS echo
  // edns-tcp-keepalive, RFC 7828, with this timeout).
  absl::Duration keepalive = absl::ZeroDuration();
  // True once the peer has shut down its sending side (read returned 0): what is in `input`
  // is all there will ever be. A handler that needs more answers kClose or a protocol error.
  bool peer_closed = false;
  // The client's address: IPv6, or IPv4 as v4-mapped IPv6 (::ffff:a.b.c.d, RFC 4291 §2.5.5.2);
  // all zero when unknown. The same for every call on one connection. For per-client policy
  // (Whois rate limiting) kept per worker: a handler must not keep it between calls.
  std::array<uint8_t, 16> peer{};
  // True once a recv on this connection filled the server's input buffer: the client sends more
  // pipelined requests than one buffer holds, so more are on their way even when `input` ends
  // exactly at a request boundary. A handler that would close only because its input ran out
  // answers kWriteThenRead instead: the server then waits for the client's next bytes or its
  // EOF, within the read timeout (RFC 7766 §6.2.1.1: every pipelined query gets its answer).
  bool more_input_expected = false;
  // Forwarding handlers only: where Process queues datagrams for upstream servers (nullptr when
  // the factory has no Upstreams), and the server's id for this connection, which the handler
  // hands back with each answer (UpstreamAnswer::connection). Ids are unique per worker.
  UpstreamQueue* upstream = nullptr;
  uint64_t connection = 0;
};

class Handler {
 public:
  virtual ~Handler() = default;

  // Looks at the bytes received and not yet consumed on one connection. Handles every complete
  // request at the front of `input` (pipelining), appending each response to `out`, and stops
  // early when `out` holds more than a soft limit of unsent bytes (RFC 9210 §4.5: 64 KiB) or a
  // response does not fit. Must not keep pointers into `input` or `out` after returning.
  virtual Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                          OutputBuffer& out) = 0;

  // Forwarding handlers only (the default does nothing). A datagram received from upstream
  // `upstream` at `now`: appends the answer for the client (a whole response, framed) to `out`
  // and says which connection it is for, or drops it. `out` is the server's per-worker answer
  // buffer, empty on entry, with room for one largest response.
  virtual UpstreamAnswer TakeUpstreamReply(int upstream, absl::Span<const uint8_t> datagram,
                                           absl::Time now, OutputBuffer& out) {
    return {};
  }
  // Forwarding handlers with a stream path only (HandlerFactory::UpstreamStreams). One whole
  // frame (as UpstreamStreamConfig::frame_length measured it, framing included) received on a
  // stream connection to upstream `upstream`: as TakeUpstreamReply.
  virtual UpstreamAnswer TakeUpstreamStreamReply(int upstream, absl::Span<const uint8_t> frame,
                                                 absl::Time now, OutputBuffer& out) {
    return {};
  }
  // Forwarding handlers only. Called by the server every UpstreamTickPeriod() with the time:
  // answers one request whose deadline has passed (appending the response for its client to
  // `out`, as TakeUpstreamReply does) and returns true, or returns false when none is left.
  // The handler may also queue datagrams (health probes) in `probes`.
  virtual bool TakeExpired(absl::Time now, OutputBuffer& out, UpstreamAnswer& answer,
                           UpstreamQueue& probes) {
    return false;
  }
  // Called once by the worker on a reload, before this handler sees its first request, with
  // the handler it replaces (which is destroyed right after). A handler whose state outlives
  // its data takes it over here: a forwarding handler's queries in flight (else their clients
  // would wait for the server's backstop), its backends' health and its cache. The default
  // takes nothing.
  virtual void TakeOver(Handler& previous) {}
};

class HandlerFactory {
 public:
  virtual ~HandlerFactory() = default;

  // The protocol's name as given to --handler ("dns", "ocsp", "whois").
  virtual absl::string_view Name() const = 0;

  // The counters this protocol's handlers keep, in index order. Fixed for the protocol: every
  // factory of it returns the same list, in static storage (a reload keeps counting into the
  // same blocks). Empty for a protocol that counts nothing.
  virtual absl::Span<const CounterSpec> Counters() const { return {}; }

  // What the data loaded into this factory holds (zones and serials, responses, objects),
  // computed at load time; called on the main thread once per load, never by a worker.
  virtual std::vector<DataGauge> DataGauges() const { return {}; }

  // A handler for one worker thread. Called once per worker at startup and on each reload.
  // The handler counts into `counters` (Counters().size() of them, owned by the worker, which
  // keeps them alive longer than the handler) on the worker's thread only.
  virtual std::unique_ptr<Handler> CreateHandler(HandlerCounters& counters) const = 0;

  // The most unconsumed input bytes a connection may buffer while the handler answers
  // kReadMore; the server closes a connection that exceeds it (a request that cannot complete).
  // The server sizes its input buffers from it.
  virtual size_t MaxRequestBytes() const = 0;

  // Capacity of the OutputBuffers the server should give this handler's responses: the largest
  // response plus room for pipelined ones (DNS: 2 + 65535 bytes per message).
  virtual size_t OutputBufferBytes() const = 0;

  // What this factory's data holds, one line per item ("zone example.com. serial 1: ..."), for
  // `onepassd --check`. Empty for a protocol with nothing to report.
  virtual std::string Summary() const { return ""; }
  // How long each phase of this factory's load took (handlers/load_phases.h), for the start-up
  // and reload log lines; empty for a protocol that does not time its load.
  virtual std::vector<LoadPhase> LoadPhases() const { return {}; }
  // The upstream servers of a forwarding handler, in the order its UpstreamQueue indexes them;
  // empty (the default) for a handler that answers everything itself. Each worker sends to them
  // from connected UDP sockets as UpstreamDatagrams() says.
  virtual std::vector<SocketAddress> Upstreams() const { return {}; }
  // How the datagrams to Upstreams() are spread over source ports (UpstreamDatagramConfig).
  virtual UpstreamDatagramConfig UpstreamDatagrams() const { return {}; }
  // How often the server calls Handler::TakeExpired (the granularity of upstream deadlines).
  virtual absl::Duration UpstreamTickPeriod() const { return absl::Milliseconds(10); }
  // The stream path to the same upstreams (UpstreamStreamConfig); none by default.
  virtual UpstreamStreamConfig UpstreamStreams() const { return {}; }
};

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_HANDLER_H_
