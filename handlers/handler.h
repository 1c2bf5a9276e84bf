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
// (<p>_counters.h: one ONEPASS_HANDLER_COUNTERS list, handlers/handler_counters.h), all in library
// <p>_core; and the flags building the factory (<p>_flags, library <p>, used by registry.cc).
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
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/forwarding.h"
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
  // A forwarding handler (handlers/forwarding.h) queued datagrams for upstream
  // servers in RequestContext::upstream, one per request it could not answer itself. The
  // server sends what is in `out` (answers it had at once), sends the datagrams, and parks the
  // connection in kWaitingUpstream until the handler has delivered one answer per datagram
  // (ForwardingHandler::TakeUpstreamReply, TakeExpired); then it does what Verdict::then says.
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
  // True when the connection is encrypted (a --tls-listen socket: DNS over TLS, HTTPS): what a
  // protocol does only over an encrypted channel, such as RFC 8467's padding of DNS answers,
  // keys on it. The handler still sees plaintext and knows nothing of TLS.
  bool encrypted = false;
  // Forwarding handlers only: where Process queues datagrams for upstream servers (nullptr when
  // the factory has no Forwarding), and the server's id for this connection, which the handler
  // hands back with each answer (UpstreamAnswer::connection). Ids are unique per worker.
  UpstreamQueue* upstream = nullptr;
  uint64_t connection = 0;
};

// What a protocol asks of the server by default, so that the server names no protocol: the
// ALPN names its TLS listeners select (RFC 7301; --tls-alpn overrides) and how long a plain
// connection is kept for a next request (--keepalive-ms's default; zero: the single pass).
struct ProtocolDefaults {
  std::vector<std::string> alpn;
  absl::Duration keepalive = absl::ZeroDuration();
};

class Handler {
 public:
  virtual ~Handler() = default;

  // Looks at the bytes received and not yet consumed on one connection. Handles every complete
  // request at the front of `input` (pipelining), appending each response to `out`, and stops
  // early when `out` holds more than a soft limit of unsent bytes (RFC 9210 §4.5: 64 KiB) or a
  // response does not fit, or after a response whose body it attached from its snapshot
  // (OutputBuffer::AttachBody: large bodies, never copied). Must not keep pointers into `input`
  // or `out` after returning.
  virtual Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                          OutputBuffer& out) = 0;

  // The forwarding half of a handler that sends requests to upstream servers
  // (handlers/forwarding.h; the DNS frontend); null (the default) for one that answers
  // everything itself.
  virtual ForwardingHandler* forwarding() { return nullptr; }
};

class HandlerFactory {
 public:
  virtual ~HandlerFactory() = default;

  // The protocol's name as given to --handler ("dns", "ocsp", "whois").
  virtual absl::string_view Name() const = 0;

  // The counters this protocol's handlers keep, in index order, in static storage (a reload
  // keeps counting into the same blocks, and the server may read a list past its factory).
  // As many for every factory of the protocol; their labels may differ from one load to the
  // next (the DNS frontend's backends, ArrangeAfter). A spec whose scope_label is set and
  // scope_value empty is a vacant slot: not exported. Empty for a protocol that counts nothing.
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
  // What a forwarding handler's workers need from the server (handlers/forwarding.h): its
  // upstreams and how to reach them. Empty (the default) for a protocol that answers
  // everything itself; its handlers' forwarding() is then null.
  virtual std::optional<ForwardingSpec> Forwarding() const { return std::nullopt; }
  // Questions for the upstreams about what serving every client through them would expose
  // (handlers/forwarding.h StartupProbe; the DNS frontend: does a backend recurse, which
  // makes us an open resolver?). The server asks them at start-up and in --check only when it
  // serves every client (no --allow-from), and logs or prints the judges' warnings. Empty (the
  // default) for a protocol without upstreams.
  virtual std::vector<StartupProbe> StartupProbes() const { return {}; }
  // Called by a reload on the new factory, before any handler is made from it, with the one it
  // replaces: a forwarding factory puts each upstream that stays at the index it had, so that
  // its requests in flight, its sockets and its counters stay with it (ForwardingHandler::
  // TakeOver), and may rename its counters (Counters(): same count, other labels). Nothing by
  // default.
  virtual void ArrangeAfter(const HandlerFactory& previous) {}
};

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_HANDLER_H_
