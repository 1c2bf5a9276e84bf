// One TCP connection's bytes and the state machine that moves them (the states and their
// transitions: server/core/connection_state.h). Connection::Advance runs one step per state
// until the connection is done or must wait for its socket. What the bytes on the wire are
// (plain, or TLS records) is its Transport's (server/transport/transport.h): one state machine
// for every transport.
//
// The same code runs the single pass (a worker's scratch Connection, never registered with the
// event loop) and parked connections (from the worker core's pool, server/core/worker_core.h,
// on either I/O driver). Thread-confined to its worker. Knows no protocol (all of that is
// Handler::Process) and no event loop: its socket calls go through SocketIo.
#ifndef ONEPASS_SERVER_CORE_CONNECTION_H_
#define ONEPASS_SERVER_CORE_CONNECTION_H_

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/handler.h"
#include "handlers/output_buffer.h"
#include "server/core/allow_list.h"
#include "server/core/clock.h"
#include "server/core/connection_state.h"
#include "server/core/deadline.h"
#include "server/core/io_driver.h"
#include "server/core/proxy_protocol.h"
#include "server/core/socket_io.h"
#include "server/core/stats.h"
#include "server/transport/input_buffer.h"
#include "server/transport/raw_transport.h"
#include "server/transport/transport.h"

namespace onepass {

// What Connection::Advance needs from its worker; read-only during the call.
struct ConnectionEnv {
  Handler* handler = nullptr;
  // The socket calls (tests script their own).
  SocketIo* io = &KernelSocketIo();
  WorkerStats* stats = nullptr;
  // The wall clock handed to the handler (RequestContext::now); the core's (tests: a fake).
  const Clock* clock = &kSystemClock;
  size_t max_request_bytes = 0;
  // Lingering close (--linger-ms > 0): see ConnectionState::kLingering.
  bool linger = false;
  // --proxy-protocol-from (server/core/proxy_protocol.h); nullptr: off, no header is looked for.
  const ProxyPolicy* proxy = nullptr;
  // --allow-from, checked here only behind a PROXY balancer (otherwise at accept, by the
  // worker); nullptr: every client is allowed.
  const AllowList* allow = nullptr;
  // The worker's queue for a forwarding handler's datagrams (HandlerFactory::Forwarding);
  // nullptr when the handler forwards nothing. The worker sends and clears it after Advance.
  UpstreamQueue* upstream = nullptr;
  // The driver's queue for the last send of a connection that closes at once
  // (IoDriver::final_send); nullptr: sent at once with SocketIo::Send.
  FinalSendQueue* final_send = nullptr;
};

// What a connection does once its response is sent whole.
enum class AfterWrite : uint8_t {
  kRead,   // keep reading requests (keepalive, pipelining, an interim response)
  kClose,  // the handler ended the connection (kWriteThenClose): close
  // ...but linger first (ConnectionState::kLingering): the client may still be sending.
  kLinger,
};

// Everything a connection knows besides its buffers, as one value: Reset assigns a fresh one
// and a hand-over copies it, so a field added here can never be forgotten by either.
struct ConnectionFields {
  int fd = -1;
  ConnectionState state = ConnectionState::kReading;
  AfterWrite after_write = AfterWrite::kRead;
  // The last Process call consumed something. A call that consumed nothing (e.g. an HTTP
  // interim 100 Continue) would get the same answer on the same bytes again: the handler keeps
  // no per-connection state, so after its output is sent the connection waits for more bytes.
  bool process_after_write = false;
  bool peer_closed = false;  // the client's EOF was read (RFC 7766 §6.2.4 half-close)
  bool served = false;       // at least one whole response sent
  bool received = false;     // a byte came from the client (TLS records included)
  // The client's address (IPv4 as v4-mapped IPv6), from accept4, or the one a trusted PROXY v2
  // header named (server/core/proxy_protocol.h): handed to the handler (RequestContext::peer) and
  // counted against the per-client limit while parked.
  std::array<uint8_t, 16> peer{};
  // A whole request was answered since the last park (only that restarts the read deadline: a
  // request dropped without an answer, e.g. a DNS response sent as a query, does not).
  bool message_consumed = false;
  // A recv filled the input buffer: the client pipelines more than a buffer holds
  // (RequestContext::more_input_expected).
  bool filled_buffer = false;
  size_t bytes_sent = 0;  // response bytes the kernel took, for kClosingUnsent
  size_t discarded = 0;   // bytes thrown away while lingering
  // The driver's FinalSendQueue took the last send and will close the socket itself.
  bool close_queued = false;
  // kWriting only to send what the transport owes the client (a TLS handshake flight, a
  // ticket) before reading on: no response is counted when it is sent.
  bool owed_only = false;
  // The listener it was accepted on (IoDriver::listener_fds order).
  int listener = 0;
  // How long it stays open for a next request after its answers (RequestContext::keepalive),
  // as the worker decided for this client at accept (server/core/reuse_learner.h): zero gives
  // the single pass.
  absl::Duration keepalive = absl::ZeroDuration();
  // Process calls that consumed a request: two or more, the client reused the connection.
  uint32_t requests = 0;
  // Requests forwarded upstream whose answers are not yet delivered (kWaitingUpstream).
  uint32_t upstream_pending = 0;
  // The worker's id of this connection (RequestContext::connection), unique per worker.
  uint64_t id = 0;
  Deadlines deadlines;
};

class Connection {
 public:
  // `output_capacity` 0: no output buffer of its own (see GiveOutput).
  Connection(size_t input_capacity, size_t output_capacity);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts serving a freshly accepted socket (from `listener`) in kReading, or kProxyHeader
  // when a PROXY header may come first (--proxy-protocol-from), on its RawTransport. Takes
  // ownership of nothing: the core closes.
  void Reset(int fd, const std::array<uint8_t, 16>& peer = {}, uint64_t id = 0,
             bool proxy_header = false, int listener = 0);
  // After Reset: serves the connection through a transport of `factory`'s (a --tls-listen
  // socket: TLS), made once per connection object and then reused. `owner` is the core's
  // handle of it (TransportFactory::Start). False when it cannot start: close the connection.
  bool StartTransport(TransportFactory& factory, void* owner);
  // Moves `other`'s socket, bytes and state here (by swapping buffers and transports: no copy),
  // leaving `other` empty. Used to park the worker's scratch connection.
  void TakeOver(Connection& other);
  // The transport in use: its lifecycle (Transport::MayWait, Parked, Ended, TimedOut) is the
  // core's to call.
  Transport& transport() { return *transport_; }
  const Transport& transport() const { return *transport_; }
  // Between connections: the transport made by StartTransport frees its library's objects
  // (after a reload, or to give memory back), or only when they belong to a replaced
  // configuration (the old certificate's key goes with the last connection that used it).
  void ReleaseTransport() {
    if (secure_ != nullptr) secure_->Release();
  }
  void ReleaseTransportIfStale() {
    if (secure_ != nullptr) secure_->ReleaseIfStale();
  }
  // A connection parked idle between requests gives back its transport's buffers.
  void ReleaseIdleBuffers() { transport_->ReleaseIdleBuffers(); }

  // Runs the state machine until the connection is done (kClosed) or must wait for its socket:
  // returns kReading (readable), kWriting (writable; out() holds the rest of the response),
  // kClosingUnsent (writable, the write deadline), kLingering (readable, the linger deadline)
  // or kWaitingUpstream (no socket event: the worker wakes it with an upstream answer).
  // Updates env.stats. Requires an output buffer (has_output()).
  ConnectionState Advance(const ConnectionEnv& env);
  // For a driver that receives for the connection (the ring): `result` is what a recv
  // into ReceiveTail() asking for `asked` bytes returned (bytes, 0 at EOF, or -errno), taken
  // as Advance's own first read in kReading would take it; then Advance goes on.
  ConnectionState AdvanceReceived(const ConnectionEnv& env, ssize_t result, size_t asked);
  // Where the next recv writes (the free space of the input buffer, or of the transport's own
  // buffer). Valid until the next call.
  absl::Span<uint8_t> ReceiveTail() {
    return ReceivesThroughTransport() ? transport_->ReceiveTail(*in_) : in_->WritableTail();
  }

  ConnectionState state() const { return fields_.state; }
  uint64_t id() const { return fields_.id; }
  int listener() const { return fields_.listener; }
  uint32_t upstream_pending() const { return fields_.upstream_pending; }
  // Forwarded requests one connection may have in flight while it reads its client's next
  // ones; at it nothing more is read until an answer is sent (backpressure).
  static constexpr uint32_t kMaxUpstreamPending = 32;
  // kWaitingUpstream and still reading: a kept-alive client that has not closed, below
  // kMaxUpstreamPending.
  bool reads_while_waiting() const {
    return fields_.state == ConnectionState::kWaitingUpstream && !fields_.peer_closed &&
           fields_.after_write == AfterWrite::kRead &&
           fields_.upstream_pending < kMaxUpstreamPending;
  }
  // The driver took the last send and closes the socket (FinalSendQueue).
  bool close_queued() const { return fields_.close_queued; }

  // One upstream answer for this connection (kWaitingUpstream, or kWriting when an earlier
  // answer is still being sent): appends `response` to the output and moves to kWriting; the
  // caller then runs Advance. False when it does not fit in the output (the caller closes).
  // Requires has_output().
  bool DeliverUpstream(absl::Span<const uint8_t> response);

  // The output buffer travels: a parked connection that waits for a request holds none; its
  // worker lends it one for each turn and takes it back unless a response is left in it
  // (kWriting). That halves the memory a crowd of slow clients can pin (docs/design.md
  // "Limits, and why").
  bool has_output() const { return out_ != nullptr; }
  std::unique_ptr<OutputBuffer> TakeOutput() { return std::move(out_); }
  void GiveOutput(std::unique_ptr<OutputBuffer> out) { out_ = std::move(out); }

  int fd() const { return fields_.fd; }
  // An idle connection closed between requests (idle timeout, drain, eviction): what its
  // transport says at its end (TLS close_notify), in one send at most.
  void SayClosing(const ConnectionEnv& env);
  // A handshake of its transport is in progress (TLS).
  bool handshaking() const { return transport_->handshaking(); }
  const std::array<uint8_t, 16>& peer() const { return fields_.peer; }
  OutputBuffer& out() { return *out_; }  // requires has_output()
  const InputBuffer& in() const { return *in_; }
  bool served() const { return fields_.served; }
  // Response bytes the kernel took on this connection (the transport's records included).
  size_t bytes_sent() const { return fields_.bytes_sent; }
  // No byte ever came from the client: a speculative connect or a probe (closed_unused).
  bool unused() const { return !fields_.received; }
  // After Reset: how long the connection waits for a next request after its answers
  // (ConnectionFields::keepalive); zero, the default, closes after them.
  void set_keepalive(absl::Duration keepalive) { fields_.keepalive = keepalive; }
  bool keep_open() const { return fields_.keepalive > absl::ZeroDuration(); }
  uint32_t requests() const { return fields_.requests; }

  // Between requests of a kept-alive connection: waits to read, nothing buffered, at least one
  // response sent.
  bool idle() const {
    return fields_.state == ConnectionState::kReading && fields_.served && in_->empty() &&
           (out_ == nullptr || out_->empty());
  }

  // Advance sets message_consumed when it consumed a whole request, which restarts the read
  // deadline (RFC 7766 §6.2.3, docs/design.md "Limits, and why"); the worker takes it when it
  // parks.
  bool TakeMessageConsumed() { return std::exchange(fields_.message_consumed, false); }
  // Kept by the worker (server/core/deadline.h); Advance disarms the write deadline when a
  // response was sent whole.
  Deadlines& deadlines() { return fields_.deadlines; }
  const Deadlines& deadlines() const { return fields_.deadlines; }

 private:
  // What one Advance call has done so far: its read budget and the handler's progress.
  struct Turn {
    int reads = 0;
    bool last_read_short = false;  // the last recv did not fill the buffer
    bool last_read_full = false;   // the last recv filled it: more may wait in the socket
    int calls_without_progress = 0;
  };
  // The connection's send path as its transport sees it, for one call.
  class Sender;

  // The steps, one per state. Each returns true when the connection can go on at once in its
  // (new) state, false when it must wait for its socket or is closed.
  bool Flush(const ConnectionEnv& env);                // kWriting
  bool Process(const ConnectionEnv& env, Turn& turn);  // kProcessing
  bool Receive(const ConnectionEnv& env, Turn& turn);  // kReading
  // What the transport made of received bytes (or of bytes it held).
  bool TakeIntake(const ConnectionEnv& env, Intake intake);
  // One send of `bytes`, the last of the connection when `last` (MSG_MORE, or the driver's
  // FinalSendQueue), or a head corked for the body after it (`body_follows`: MSG_MORE, never
  // the queue): bytes taken, or -errno.
  ssize_t SendBytes(const ConnectionEnv& env, absl::Span<const uint8_t> bytes, bool last,
                    bool body_follows = false);
  // One send of the rest of the output's body: sendfile(2) from its file when it has one, else
  // as SendBytes. Bytes taken, or -errno.
  ssize_t SendBody(const ConnectionEnv& env, const OutputBuffer& out, bool last);
  // The recv goes to the transport (not during a PROXY header, which precedes it).
  bool ReceivesThroughTransport() const { return fields_.state != ConnectionState::kProxyHeader; }
  // Receive's second half: what the recv of `asked` bytes returned (-errno on error).
  bool TakeReceived(const ConnectionEnv& env, Turn& turn, ssize_t result, size_t asked);
  // The loop of Advance, from `go_on`.
  ConnectionState Run(const ConnectionEnv& env, Turn& turn, bool go_on);
  bool Linger(const ConnectionEnv& env);                 // kLingering
  bool TakeProxy(const ConnectionEnv& env, Turn& turn);  // kProxyHeader
  bool AwaitSent(const ConnectionEnv& env);              // kClosingUnsent

  // Moves to `state` and goes on (returns true).
  bool MoveTo(ConnectionState state) {
    fields_.state = state;
    return true;
  }
  // Moves to kClosed (returns false: nothing more to do).
  bool Finish() {
    fields_.state = ConnectionState::kClosed;
    return false;
  }
  // The handler needs more bytes: kReading, unless the client is gone or the request too big.
  bool NeedMoreInput(const ConnectionEnv& env);
  // More bytes cannot make a whole request (the client is gone, or the request is too big):
  // moves to kClosed, counted, and returns true.
  bool InputIsFinal(const ConnectionEnv& env);
  // Counts a connection closed by the peer or by the handler at end of input.
  void CountEndOfInput(const ConnectionEnv& env);
  // Shuts the write side down and moves to kLingering.
  bool StartLinger(const ConnectionEnv& env);
  // The last response is sent to the kernel: wait for the kernel to send it (kClosingUnsent)
  // when the client holds it back, then linger or close.
  bool CloseAfterWrite(const ConnectionEnv& env);

  ConnectionFields fields_;
  std::unique_ptr<InputBuffer> in_;
  std::unique_ptr<OutputBuffer> out_;
  // The transport in use: raw_, or secure_ after StartTransport.
  RawTransport raw_;
  // Made by the first StartTransport; travels with the buffers (TakeOver).
  std::unique_ptr<Transport> secure_;
  Transport* transport_ = &raw_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_CONNECTION_H_
