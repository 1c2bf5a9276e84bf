#include "server/core/connection.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "server/core/body_files.h"
#include "server/core/core_config.h"

namespace onepass {
namespace {

// Consecutive handler calls that consume nothing and lead to no read: a handler bug (it keeps
// answering kWriteThenRead without progress). The connection is closed instead of spinning.
constexpr int kMaxCallsWithoutProgress = 8;

}  // namespace

// What a transport sends through: this connection's counted, corked or queued sends.
class Connection::Sender final : public SendPath {
 public:
  Sender(Connection& connection, const ConnectionEnv& env) : connection_(connection), env_(env) {}
  ssize_t SendBytes(absl::Span<const uint8_t> bytes, bool last, bool body_follows) override {
    return connection_.SendBytes(env_, bytes, last, body_follows);
  }
  ssize_t SendBody(const OutputBuffer& out, bool last) override {
    return connection_.SendBody(env_, out, last);
  }
  bool MayCorkWithClose(size_t bytes) const override {
    // The close follows at once: not lingering (its shutdown must push the answer alone), no
    // answer still to come from an upstream, and below the size at which CloseAfterWrite
    // waits for the kernel (it would wait for bytes still corked).
    const ConnectionFields& fields = connection_.fields_;
    return fields.after_write == AfterWrite::kClose && fields.upstream_pending == 0 &&
           fields.bytes_sent + bytes <= kUnsentCheckBytes;
  }

 private:
  Connection& connection_;
  const ConnectionEnv& env_;
};

Connection::Connection(size_t input_capacity, size_t output_capacity)
    : in_(std::make_unique<InputBuffer>(input_capacity)),
      out_(output_capacity > 0 ? std::make_unique<OutputBuffer>(output_capacity) : nullptr) {}

Connection::~Connection() = default;

void Connection::Reset(int fd, const std::array<uint8_t, 16>& peer, uint64_t id, bool proxy_header,
                       int listener) {
  fields_ = ConnectionFields();
  fields_.fd = fd;
  if (proxy_header) fields_.state = ConnectionState::kProxyHeader;
  fields_.peer = peer;
  fields_.id = id;
  fields_.listener = listener;
  in_->Clear();
  if (out_ != nullptr) out_->Clear();
  raw_.Start();
  transport_ = &raw_;
}

bool Connection::StartTransport(TransportFactory& factory, void* owner) {
  if (secure_ == nullptr) secure_ = factory.Make();
  if (!factory.Start(*secure_, fields_.peer, owner)) return false;
  transport_ = secure_.get();
  return true;
}

void Connection::TakeOver(Connection& other) {
  fields_ = other.fields_;
  std::swap(in_, other.in_);
  std::swap(out_, other.out_);
  std::swap(secure_, other.secure_);
  raw_ = other.raw_;
  transport_ = other.transport_ == &other.raw_ ? &raw_ : secure_.get();
  other.Reset(-1);
}

ConnectionState Connection::Advance(const ConnectionEnv& env) {
  Turn turn;
  return Run(env, turn, /*go_on=*/true);
}

ConnectionState Connection::AdvanceReceived(const ConnectionEnv& env, ssize_t result,
                                            size_t asked) {
  Turn turn;
  return Run(env, turn, TakeReceived(env, turn, result, asked));
}

ConnectionState Connection::Run(const ConnectionEnv& env, Turn& turn, bool go_on) {
  while (go_on) {
    switch (fields_.state) {
      case ConnectionState::kProxyHeader:
        go_on = TakeProxy(env, turn);
        break;
      case ConnectionState::kReading:
        go_on = Receive(env, turn);
        break;
      case ConnectionState::kProcessing:
        go_on = Process(env, turn);
        break;
      case ConnectionState::kWriting:
        go_on = Flush(env);
        break;
      case ConnectionState::kLingering:
        go_on = Linger(env);
        break;
      case ConnectionState::kClosingUnsent:
        go_on = AwaitSent(env);
        break;
      case ConnectionState::kWaitingUpstream:
        // The worker wakes it with each answer (DeliverUpstream); it runs here when the client
        // sent more meanwhile (the worker's read watch): those queries go upstream too.
        go_on = reads_while_waiting() && Receive(env, turn);
        break;
      case ConnectionState::kClosed:
        go_on = false;
        break;
    }
  }
  return fields_.state;
}

bool Connection::Receive(const ConnectionEnv& env, Turn& turn) {
  if (fields_.peer_closed) {  // answered all it sent before its EOF
    CountEndOfInput(env);
    return Finish();
  }
  if (ReceivesThroughTransport()) {
    switch (transport_->owed()) {
      case Owed::kDecode: {  // bytes it holds: no recv
        Sender send(*this, env);
        return TakeIntake(env, transport_->Decode(*in_, send));
      }
      case Owed::kSend:  // its handshake flight, a ticket: the client waits for it
        fields_.owed_only = true;
        return MoveTo(ConnectionState::kWriting);
      case Owed::kNothing:
        break;
    }
  }
  if (turn.reads == kReadsPerTurn) return false;  // the rest is still in the socket
  // A read that did not fill the buffer most likely emptied the socket: let the (level-
  // triggered) event loop say when more has come instead of paying a recv for EAGAIN.
  if (turn.last_read_short) return false;
  absl::Span<uint8_t> tail = ReceiveTail();
  if (tail.empty()) {  // cannot happen with capacity > max_request_bytes; never spin
    WorkerStats::Add(env.stats->rejected_oversize);
    return Finish();
  }
  return TakeReceived(env, turn, env.io->Receive(fields_.fd, tail), tail.size());
}

bool Connection::TakeReceived(const ConnectionEnv& env, Turn& turn, ssize_t received,
                              size_t asked) {
  ++turn.reads;
  WorkerStats::Add(env.stats->recvs);
  if (received > 0) {
    fields_.received = true;
    turn.last_read_short = static_cast<size_t>(received) < asked;
    turn.last_read_full = !turn.last_read_short;
    turn.calls_without_progress = 0;
    if (ReceivesThroughTransport()) {
      Sender send(*this, env);
      return TakeIntake(env, transport_->TakeReceived(static_cast<size_t>(received), *in_, send));
    }
    in_->Commit(static_cast<size_t>(received));  // a PROXY header, before the transport
    if (turn.last_read_full) fields_.filled_buffer = true;
    return MoveTo(ConnectionState::kProxyHeader);
  }
  if (received == 0) {
    // RFC 7766 §6.2.4 / RFC 3912: the client half-closed; answer what is there, then close.
    fields_.peer_closed = true;
    if (fields_.state == ConnectionState::kWaitingUpstream && in_->empty()) {
      return false;  // its answers still come, then the close (Flush)
    }
    return MoveTo(ReceivesThroughTransport() ? ConnectionState::kProcessing
                                             : ConnectionState::kProxyHeader);
  }
  if (received == -EAGAIN || received == -EWOULDBLOCK) return false;
  if (received == -EINTR) return true;  // again, in the same state
  WorkerStats::Add(env.stats->reset_errors);
  return Finish();
}

void Connection::SayClosing(const ConnectionEnv& env) {
  Sender send(*this, env);
  transport_->SayClosing(send);
}

bool Connection::TakeIntake(const ConnectionEnv& env, Intake intake) {
  // The request buffer filled: the client pipelines more than it holds.
  if (in_->size() == in_->capacity()) fields_.filled_buffer = true;
  switch (intake) {
    case Intake::kInput:
      return MoveTo(ConnectionState::kProcessing);
    case Intake::kPeerClosed:
      // As a TCP half-close: nothing more comes; answer what is there, then close.
      fields_.peer_closed = true;
      if (fields_.upstream_pending > 0 && in_->empty()) {
        fields_.state = ConnectionState::kWaitingUpstream;  // its answers, then the close
        return false;
      }
      return MoveTo(ConnectionState::kProcessing);
    case Intake::kNeedMore:
      // A record in pieces while answers are due: it waits for them and for the rest alike.
      return MoveTo(fields_.upstream_pending > 0 ? ConnectionState::kWaitingUpstream
                                                 : ConnectionState::kReading);
    case Intake::kWrongProtocol:
      // A TLS client on a plain port: closed at once, not left to time out on a "request"
      // that can never be whole.
      WorkerStats::Add(env.stats->rejected_tls_on_plain);
      return Finish();
    case Intake::kNoRoom:
      WorkerStats::Add(env.stats->rejected_oversize);
      return Finish();
    case Intake::kFailed:
      break;  // counted by the transport
  }
  return Finish();
}

bool Connection::TakeProxy(const ConnectionEnv& env, Turn& turn) {
  if (in_->empty() && !fields_.peer_closed) return Receive(env, turn);
  const ProxyStep step =
      TakeProxyHeader(in_->contents(), fields_.peer, *env.proxy, fields_.peer_closed);
  switch (step.action) {
    case ProxyStep::Action::kReject:
      WorkerStats::Add(env.stats->rejected_proxy);
      return Finish();
    case ProxyStep::Action::kReadMore:
      if (InputIsFinal(env)) return false;
      return Receive(env, turn);  // waits in kProxyHeader when the socket is empty
    case ProxyStep::Action::kDone:
      break;
  }
  if (step.consumed > 0) WorkerStats::Add(env.stats->proxy_headers);
  in_->Consume(step.consumed);
  // Behind a load balancer the client is the one its header names: that address goes to the
  // handler and keys the per-client limit.
  if (step.has_client) fields_.peer = step.client;
  // --allow-from behind a balancer: the client its header named (or, without one, the peer),
  // before any TLS work, which comes after the header.
  if (env.allow != nullptr && !env.allow->Allows(fields_.peer)) {
    WorkerStats::Add(env.stats->rejected_acl);
    return Finish();
  }
  // What followed the header is the transport's first bytes (TLS takes them as ciphertext).
  transport_->AfterProxyHeader(*in_, fields_.peer);
  // The header came alone: the request follows (or, through TLS, the handshake's first bytes
  // wait in the transport: kReading decodes them before any recv).
  fields_.state = ConnectionState::kReading;
  return in_->empty() ? true : MoveTo(ConnectionState::kProcessing);
}

bool Connection::Process(const ConnectionEnv& env, Turn& turn) {
  RequestContext context;
  context.now = env.clock->wall();
  context.keepalive = fields_.keepalive;
  context.peer_closed = fields_.peer_closed;
  context.peer = fields_.peer;
  context.more_input_expected = fields_.filled_buffer;
  context.encrypted = transport_->encrypted();
  context.upstream = env.upstream;
  context.connection = fields_.id;
  const size_t output_before = out_->pending();
  const size_t queued_before = env.upstream != nullptr ? env.upstream->size() : 0;
  const Verdict verdict = env.handler->Process(in_->contents(), context, *out_);
  const size_t consumed = verdict.consumed < in_->size() ? verdict.consumed : in_->size();
  in_->Consume(consumed);
  fields_.process_after_write = consumed > 0;
  if (consumed > 0) {
    // Only an answered request restarts the read deadline: bytes the handler drops without a
    // word (a DNS response sent as a query, RFC 1035 §4.1.1 QR) must not keep a connection.
    if (out_->pending() > output_before) fields_.message_consumed = true;
    ++fields_.requests;
    turn.calls_without_progress = 0;
  } else if (++turn.calls_without_progress > kMaxCallsWithoutProgress) {
    WorkerStats::Add(env.stats->handler_loops);
    return Finish();
  }
  switch (verdict.action) {
    case Action::kClose:
      if (fields_.peer_closed) {
        CountEndOfInput(env);
      } else {
        WorkerStats::Add(env.stats->closed_by_handler);
      }
      return Finish();
    case Action::kWriteThenClose:
      // Linger only when the client may still be sending: request bytes left unconsumed (the
      // handler answered before the end of the request; handlers consume exactly what they
      // parsed, so this is exact) or the last recv filled the buffer (more may wait in the
      // socket). The usual single pass, one read consumed whole, closes at once, and so does
      // a request that came in several reads and was consumed whole.
      fields_.after_write =
          env.linger && !fields_.peer_closed && (!in_->empty() || turn.last_read_full)
              ? AfterWrite::kLinger
              : AfterWrite::kClose;
      if (out_->empty()) {
        WorkerStats::Add(env.stats->closed_by_handler);
        return Finish();
      }
      return MoveTo(ConnectionState::kWriting);
    case Action::kWriteThenRead:
      fields_.after_write = AfterWrite::kRead;
      // More responses may follow: TCP_NODELAY came from the listener (SetListenerNoDelay).
      if (!out_->empty()) return MoveTo(ConnectionState::kWriting);
      // More whole requests may be buffered (pipelining): the handler sees them at once.
      if (consumed > 0 && !in_->empty()) return MoveTo(ConnectionState::kProcessing);
      return NeedMoreInput(env);
    case Action::kWaitUpstream: {
      const size_t queued = env.upstream != nullptr ? env.upstream->size() - queued_before : 0;
      fields_.upstream_pending += static_cast<uint32_t>(queued);
      if (queued > 0) fields_.message_consumed = true;
      // Never lingering: RFC 7766, a DNS client is done sending by now.
      fields_.after_write =
          verdict.then == Action::kWriteThenClose ? AfterWrite::kClose : AfterWrite::kRead;
      if (!out_->empty()) return MoveTo(ConnectionState::kWriting);
      if (fields_.upstream_pending > 0) {
        fields_.state = ConnectionState::kWaitingUpstream;
        return false;  // the worker wakes it with an answer
      }
      if (fields_.after_write != AfterWrite::kRead) return Finish();
      return NeedMoreInput(env);
    }
    case Action::kReadMore:
      fields_.after_write = AfterWrite::kRead;
      // Output with kReadMore is tolerated: it is sent anyway.
      if (!out_->empty()) return MoveTo(ConnectionState::kWriting);
      return NeedMoreInput(env);
  }
  return NeedMoreInput(env);  // not an Action: treated as kReadMore
}

bool Connection::NeedMoreInput(const ConnectionEnv& env) {
  if (fields_.upstream_pending > 0) {
    // Answers are still to come: nothing more is read until they are sent (backpressure).
    fields_.state = ConnectionState::kWaitingUpstream;
    return false;
  }
  if (InputIsFinal(env)) return false;
  return MoveTo(ConnectionState::kReading);
}

bool Connection::InputIsFinal(const ConnectionEnv& env) {
  if (fields_.peer_closed) {
    CountEndOfInput(env);
    Finish();
    return true;
  }
  if (in_->size() > env.max_request_bytes) {
    WorkerStats::Add(env.stats->rejected_oversize);
    Finish();
    return true;
  }
  return false;
}

bool Connection::Flush(const ConnectionEnv& env) {
  if (!out_->empty()) fields_.owed_only = false;
  // Closing: nothing follows this output on the connection (what a transport ends with, TLS
  // close_notify, rides with it).
  const bool closing = fields_.after_write != AfterWrite::kRead && fields_.upstream_pending == 0;
  Sender send(*this, env);
  switch (transport_->Flush(*out_, closing, send)) {
    case Flushed::kAll:
      break;
    case Flushed::kWouldBlock:
      return false;  // wait until writable
    case Flushed::kSendError:
      WorkerStats::Add(env.stats->reset_errors);
      return Finish();
    case Flushed::kFailed:
      return Finish();  // counted by the transport
  }
  if (std::exchange(fields_.owed_only, false)) {
    fields_.deadlines.write.reset();  // as after a response: the next wait gets its own
    return MoveTo(ConnectionState::kReading);
  }
  fields_.deadlines.write.reset();  // the next response that waits gets its own deadline
  WorkerStats::Add(env.stats->responses);
  if (!fields_.served) {
    fields_.served = true;
    WorkerStats::Add(env.stats->served);
  }
  if (fields_.upstream_pending > 0) {
    // More requests left buffered go first (their datagrams leave too); then wait.
    if (!in_->empty() && fields_.process_after_write) {
      return MoveTo(ConnectionState::kProcessing);
    }
    fields_.state = ConnectionState::kWaitingUpstream;
    return false;
  }
  if (fields_.after_write != AfterWrite::kRead) return CloseAfterWrite(env);
  // Requests left after the handler stopped early (its output was full) go first; bytes it
  // consumed none of wait for more input (ConnectionFields::process_after_write).
  return MoveTo(!in_->empty() && fields_.process_after_write ? ConnectionState::kProcessing
                                                             : ConnectionState::kReading);
}

ssize_t Connection::SendBytes(const ConnectionEnv& env, absl::Span<const uint8_t> bytes, bool last,
                              bool body_follows) {
  WorkerStats::Add(env.stats->sends);
  if (last && !body_follows && env.final_send != nullptr &&
      env.final_send->QueueFinalSend(fields_.fd, bytes)) {
    fields_.close_queued = true;  // the queue sends it, then closes
    fields_.bytes_sent += bytes.size();
    return static_cast<ssize_t>(bytes.size());
  }
  ssize_t sent;
  do {
    sent = env.io->Send(fields_.fd, bytes, last || body_follows);
  } while (sent == -EINTR);
  if (sent > 0) fields_.bytes_sent += static_cast<size_t>(sent);
  return sent;
}

ssize_t Connection::SendBody(const ConnectionEnv& env, const OutputBuffer& out, bool last) {
  const SharedBody& body = out.body();
  const int file = BodyFileForThisThread(body);
  if (file < 0) return SendBytes(env, body.bytes, last);
  // The kernel takes the file's pages: no copy of the body into a buffer of ours or of its.
  WorkerStats::Add(env.stats->sends);
  ssize_t sent;
  do {
    sent = env.io->SendFile(fields_.fd, file, body.file_offset, body.bytes.size());
  } while (sent == -EINTR);
  if (sent > 0) {
    fields_.bytes_sent += static_cast<size_t>(sent);
    WorkerStats::Add(env.stats->sendfile_bytes, static_cast<uint64_t>(sent));
  } else if (sent == 0) {
    return -EIO;  // the sealed file cannot be shorter than its bytes: never loop on it
  }
  return sent;
}

bool Connection::DeliverUpstream(absl::Span<const uint8_t> response) {
  if (!out_->Append(response)) return false;
  out_->EndMessage();  // one answer: a TLS record of its own (OutputBuffer::EndMessage)
  if (fields_.upstream_pending > 0) --fields_.upstream_pending;
  if (fields_.state == ConnectionState::kWaitingUpstream ||
      fields_.state == ConnectionState::kReading) {
    fields_.state = ConnectionState::kWriting;
  }
  return true;
}

bool Connection::CloseAfterWrite(const ConnectionEnv& env) {
  // Below kUnsentCheckBytes the orphan's bound in bytes is that constant; above it, the kernel
  // is asked (one ioctl) whether the client has taken it all.
  if (fields_.bytes_sent > kUnsentCheckBytes && env.io->UnsentBytes(fields_.fd) > 0) {
    env.io->SetWritableWhenSent(fields_.fd);
    fields_.state = ConnectionState::kClosingUnsent;
    return false;  // wait until writable
  }
  return fields_.after_write == AfterWrite::kLinger ? StartLinger(env) : Finish();
}

bool Connection::AwaitSent(const ConnectionEnv& env) {
  if (env.io->UnsentBytes(fields_.fd) > 0) return false;  // still held back: wait again
  return fields_.after_write == AfterWrite::kLinger ? StartLinger(env) : Finish();
}

void Connection::CountEndOfInput(const ConnectionEnv& env) {
  // A peer that closed after its last answer with nothing pending is a normal end; one that
  // left bytes of a request, or never got an answer, closed with its request incomplete.
  if (!in_->empty() || !fields_.served) WorkerStats::Add(env.stats->closed_incomplete);
  if (!fields_.received) WorkerStats::Add(env.stats->closed_unused);
}

bool Connection::StartLinger(const ConnectionEnv& env) {
  WorkerStats::Add(env.stats->lingering_closes);
  // FIN after the response: the client sees the end of it and, being done, closes too.
  env.io->ShutdownWrite(fields_.fd);
  in_->Clear();
  return MoveTo(ConnectionState::kLingering);
}

bool Connection::Linger(const ConnectionEnv& env) {
  // Reads and drops what the client still sends, until its EOF (or an error, or beyond
  // kLingerMaxBytes); kReadsPerTurn at most per call, like any other connection.
  for (int reads = 0; reads < kReadsPerTurn; ++reads) {
    absl::Span<uint8_t> tail = in_->WritableTail();
    const ssize_t received = env.io->Receive(fields_.fd, tail);
    WorkerStats::Add(env.stats->recvs);
    if (received == 0) return Finish();  // the client's EOF: nothing unread, no RST
    if (received < 0) {
      if (received == -EINTR) continue;
      if (received == -EAGAIN || received == -EWOULDBLOCK) return false;  // wait to read
      return Finish();  // reset by the client: nothing left to protect
    }
    fields_.discarded += static_cast<size_t>(received);
    if (fields_.discarded > kLingerMaxBytes) {
      WorkerStats::Add(env.stats->linger_cut);
      return Finish();
    }
  }
  return false;
}

}  // namespace onepass
