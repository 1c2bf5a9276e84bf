#include "server/connection.h"

#include <event2/event.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "server/limits.h"
#include "server/socket_options.h"

namespace onepass {
namespace {

// Consecutive handler calls that consume nothing and lead to no read: a handler bug (it keeps
// answering kWriteThenRead without progress). The connection is closed instead of spinning.
constexpr int kMaxCallsWithoutProgress = 8;

}  // namespace

void InputBuffer::Consume(size_t n) {
  begin_ += n < size() ? n : size();
  if (begin_ == end_) begin_ = end_ = 0;
}

absl::Span<uint8_t> InputBuffer::WritableTail() {
  if (begin_ > 0) {
    // Only the tail of an incomplete request is left here: a short move.
    std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  return {data_.get() + end_, capacity_ - end_};
}

Connection::Connection(size_t input_capacity, size_t output_capacity)
    : in_(std::make_unique<InputBuffer>(input_capacity)),
      out_(output_capacity > 0 ? std::make_unique<OutputBuffer>(output_capacity) : nullptr) {}

Connection::~Connection() {
  if (event != nullptr) event_free(event);
}

void Connection::Reset(int fd) {
  fd_ = fd;
  in_->Clear();
  if (out_ != nullptr) out_->Clear();
  close_after_write_ = false;
  linger_after_write_ = false;
  lingering_ = false;
  process_after_write_ = false;
  discarded_ = 0;
  need_process_ = false;
  peer_closed_ = false;
  served_ = false;
  nodelay_ = false;
  message_consumed_ = false;
  read_deadline_armed = false;
  read_deadline_is_idle = false;
  write_deadline_armed = false;
  linger_deadline_armed = false;
}

void Connection::TakeOver(Connection& other) {
  fd_ = std::exchange(other.fd_, -1);
  std::swap(in_, other.in_);
  std::swap(out_, other.out_);
  close_after_write_ = other.close_after_write_;
  linger_after_write_ = other.linger_after_write_;
  lingering_ = other.lingering_;
  process_after_write_ = other.process_after_write_;
  discarded_ = other.discarded_;
  need_process_ = other.need_process_;
  peer_closed_ = other.peer_closed_;
  served_ = other.served_;
  nodelay_ = other.nodelay_;
  message_consumed_ = other.message_consumed_;
  read_deadline = other.read_deadline;
  read_deadline_armed = other.read_deadline_armed;
  read_deadline_is_idle = other.read_deadline_is_idle;
  write_deadline = other.write_deadline;
  write_deadline_armed = other.write_deadline_armed;
  linger_deadline = other.linger_deadline;
  linger_deadline_armed = other.linger_deadline_armed;
  other.Reset(-1);
}

bool Connection::Flush(const ConnectionEnv& env, Next* next) {
  while (!out_->empty()) {
    // The whole response in one send: the handler built the length prefix and the message
    // together, so no tinygram leaves (RFC 7766 §8; DESIGN.md "One send per response").
    ssize_t sent = send(fd_, out_->data(), out_->size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    WorkerStats::Add(env.stats->sends);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        *next = Next::kWaitForWrite;
        return false;
      }
      WorkerStats::Add(env.stats->reset_errors);
      WorkerStats::Add(env.stats->errors);
      *next = Next::kClose;
      return false;
    }
    out_->Consume(static_cast<size_t>(sent));
    if (!out_->empty()) {
      *next = Next::kWaitForWrite;
      return false;
    }
  }
  write_deadline_armed = false;
  WorkerStats::Add(env.stats->responses);
  if (!served_) {
    served_ = true;
    WorkerStats::Add(env.stats->served);
  }
  return true;
}

void Connection::CountEndOfInput(const ConnectionEnv& env) {
  // A peer that closed after its last answer with nothing pending is a normal end; one that
  // left bytes of a request, or never got an answer, closed with its request incomplete.
  if (!in_->empty() || !served_) WorkerStats::Add(env.stats->closed_incomplete);
}

Connection::Next Connection::BeginLinger(const ConnectionEnv& env) {
  WorkerStats::Add(env.stats->lingering_closes);
  // FIN after the response: the client sees the end of it and, being done, closes too.
  shutdown(fd_, SHUT_WR);
  lingering_ = true;
  in_->Clear();
  return Discard(env);
}

Connection::Next Connection::Discard(const ConnectionEnv& env) {
  for (int reads = 0; reads < kReadsPerTurn; ++reads) {
    absl::Span<uint8_t> tail = in_->WritableTail();
    ssize_t received = recv(fd_, tail.data(), tail.size(), MSG_DONTWAIT);
    WorkerStats::Add(env.stats->recvs);
    if (received == 0) return Next::kClose;  // the client's EOF: nothing unread, no RST
    if (received < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Next::kLinger;
      return Next::kClose;  // reset by the client: nothing left to protect
    }
    discarded_ += static_cast<size_t>(received);
    if (discarded_ > kLingerMaxBytes) {
      WorkerStats::Add(env.stats->linger_cut);
      return Next::kClose;
    }
  }
  return Next::kLinger;
}

Connection::Next Connection::Advance(const ConnectionEnv& env) {
  if (lingering_) return Discard(env);
  int reads = 0;
  bool last_read_short = false;
  bool last_read_full = false;
  int calls_without_progress = 0;
  while (true) {
    if (!out_->empty()) {
      Next next;
      if (!Flush(env, &next)) return next;
      if (close_after_write_) return linger_after_write_ ? BeginLinger(env) : Next::kClose;
      // Requests left after the handler stopped early. A call that consumed nothing (e.g. an
      // HTTP interim 100 Continue) would get the same answer again on the same bytes: the
      // handler keeps no per-connection state, so it waits for more bytes instead.
      if (!in_->empty() && process_after_write_) need_process_ = true;
    }

    if (need_process_) {
      need_process_ = false;
      RequestContext context;
      context.now = absl::Now();
      context.keepalive = env.keepalive;
      context.peer_closed = peer_closed_;
      context.peer = peer;
      const Verdict verdict = env.handler->Process(in_->contents(), context, *out_);
      const size_t consumed = verdict.consumed < in_->size() ? verdict.consumed : in_->size();
      in_->Consume(consumed);
      process_after_write_ = consumed > 0;
      if (consumed > 0) {
        message_consumed_ = true;
        calls_without_progress = 0;
      } else if (++calls_without_progress > kMaxCallsWithoutProgress) {
        WorkerStats::Add(env.stats->handler_loops);
        return Next::kClose;
      }
      switch (verdict.action) {
        case Action::kClose:
          if (peer_closed_) {
            CountEndOfInput(env);
          } else {
            WorkerStats::Add(env.stats->closed_by_handler);
          }
          return Next::kClose;
        case Action::kWriteThenClose:
          close_after_write_ = true;
          // Linger only when the client may still be sending: request bytes left unconsumed
          // (the handler answered before the end of the request; handlers consume only what
          // they parsed, so this is exact) or the last recv filled the buffer (more may wait
          // in the socket). The usual single pass, one read consumed whole, closes at once,
          // and so does a request that came in several reads and was consumed whole.
          linger_after_write_ = env.linger && !peer_closed_ && (!in_->empty() || last_read_full);
          if (out_->empty()) {
            WorkerStats::Add(env.stats->closed_by_handler);
            return Next::kClose;
          }
          continue;
        case Action::kWriteThenRead:
          close_after_write_ = false;
          if (!nodelay_) {
            // More responses may follow on this connection: see SetNoDelay.
            SetNoDelay(fd_);
            nodelay_ = true;
          }
          if (!out_->empty()) continue;
          if (consumed > 0 && !in_->empty()) {
            need_process_ = true;
            continue;
          }
          break;  // nothing to send: wait for the next request
        case Action::kReadMore:
          close_after_write_ = false;
          if (!out_->empty()) continue;  // tolerated: send what was appended anyway
          break;
      }
      // The handler needs more bytes.
      if (peer_closed_) {
        CountEndOfInput(env);
        return Next::kClose;
      }
      if (in_->size() > env.max_request_bytes) {
        WorkerStats::Add(env.stats->rejected_oversize);
        WorkerStats::Add(env.stats->rejected);
        return Next::kClose;
      }
    } else if (peer_closed_) {
      CountEndOfInput(env);
      return Next::kClose;
    }

    if (reads == kReadsPerTurn) return Next::kWaitForRead;  // the rest is still in the socket
    // A read that did not fill the buffer most likely emptied the socket: let the (level-
    // triggered) event loop say when more has come instead of paying a recv for EAGAIN.
    if (last_read_short) return Next::kWaitForRead;
    absl::Span<uint8_t> tail = in_->WritableTail();
    if (tail.empty()) {  // cannot happen with capacity > max_request_bytes; never spin
      WorkerStats::Add(env.stats->rejected_oversize);
      WorkerStats::Add(env.stats->rejected);
      return Next::kClose;
    }
    ssize_t received = recv(fd_, tail.data(), tail.size(), MSG_DONTWAIT);
    ++reads;
    WorkerStats::Add(env.stats->recvs);
    if (received > 0) {
      last_read_short = static_cast<size_t>(received) < tail.size();
      last_read_full = !last_read_short;
      in_->Commit(static_cast<size_t>(received));
      need_process_ = true;
      calls_without_progress = 0;
    } else if (received == 0) {
      // RFC 7766 §6.2.4 / RFC 3912: the client half-closed; answer what is there, then close.
      peer_closed_ = true;
      need_process_ = true;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return Next::kWaitForRead;
    } else if (errno != EINTR) {
      WorkerStats::Add(env.stats->reset_errors);
      WorkerStats::Add(env.stats->errors);
      return Next::kClose;
    }
  }
}

}  // namespace onepass
