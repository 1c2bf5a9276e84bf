// One TCP connection's bytes and the transport state machine that moves them:
//   send pending output → hand unconsumed input to the handler → recv more → ...
// until the connection is done, must wait for the socket to become readable (incomplete
// request), or must wait for it to become writable (socket buffer full).
//
// The same code runs the single pass (a worker's scratch Connection, never registered with the
// event loop) and parked connections (from the worker's ConnectionPool, driven by libevent).
// Thread-confined to its worker. Knows no protocol: all of that is Handler::Process.
#ifndef ONEPASS_SERVER_CONNECTION_H_
#define ONEPASS_SERVER_CONNECTION_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/handler.h"
#include "handlers/output_buffer.h"
#include "server/stats.h"

struct event;

namespace onepass {

class Worker;

using SteadyTime = std::chrono::steady_clock::time_point;

// Received bytes not yet consumed by the handler. Fixed capacity, allocated once.
class InputBuffer {
 public:
  explicit InputBuffer(size_t capacity)
      : data_(std::make_unique_for_overwrite<uint8_t[]>(capacity)), capacity_(capacity) {}

  absl::Span<const uint8_t> contents() const { return {data_.get() + begin_, end_ - begin_}; }
  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  size_t capacity() const { return capacity_; }

  // Drops `n` <= size() bytes from the front.
  void Consume(size_t n);
  // Free space after the contents, moving the contents to the front first.
  absl::Span<uint8_t> WritableTail();
  // Adds `n` bytes written into WritableTail() to the contents.
  void Commit(size_t n) { end_ += n; }
  void Clear() { begin_ = end_ = 0; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

// What Connection::Advance needs from its worker; read-only during the call.
struct ConnectionEnv {
  Handler* handler = nullptr;
  WorkerStats* stats = nullptr;
  size_t max_request_bytes = 0;
  absl::Duration keepalive = absl::ZeroDuration();
  // Lingering close (--linger-ms > 0): see Next::kLinger.
  bool linger = false;
};

class Connection {
 public:
  enum class Next {
    kClose,         // done (the caller closes the socket; counters are already updated)
    kWaitForRead,   // incomplete request, or the read budget of this turn is spent
    kWaitForWrite,  // the socket buffer is full; out() holds the rest of the response
    // The response is sent and the write side shut down, but the client may still be sending
    // (the handler answered kWriteThenClose with request bytes left over, e.g. an HTTP 413/431
    // before the body was read). close() with unread data makes the kernel send RST, which can
    // destroy the response before the client reads it (RFC 9112 §9.6; nginx lingering_close).
    // So the connection reads and discards, up to kLingerMaxBytes, until the client's EOF:
    // wait for it to become readable, within --linger-ms. Only then is it closed.
    kLinger,
  };

  // `output_capacity` 0: no output buffer of its own (see GiveOutput).
  Connection(size_t input_capacity, size_t output_capacity);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts serving a freshly accepted socket (takes ownership of nothing: the worker closes).
  void Reset(int fd);
  // Moves `other`'s socket, bytes and state here (by swapping buffers: no copy), leaving
  // `other` empty. Used to park the worker's scratch connection.
  void TakeOver(Connection& other);

  // Runs the state machine until the connection is done or must wait. Updates env.stats.
  // Requires an output buffer (has_output()).
  Next Advance(const ConnectionEnv& env);

  // The output buffer travels: a parked connection that waits for a request holds none; its
  // worker lends it one for each turn and takes it back unless a response is left in it
  // (kWaitForWrite). That halves the memory a crowd of slow clients can pin (DESIGN.md Limits).
  bool has_output() const { return out_ != nullptr; }
  std::unique_ptr<OutputBuffer> TakeOutput() { return std::move(out_); }
  void GiveOutput(std::unique_ptr<OutputBuffer> out) { out_ = std::move(out); }

  int fd() const { return fd_; }
  OutputBuffer& out() { return *out_; }  // requires has_output()
  const InputBuffer& in() const { return *in_; }
  bool served() const { return served_; }

  // Between requests of a kept-alive connection: nothing buffered, at least one response sent.
  bool idle() const {
    return served_ && !lingering_ && in_->empty() && (out_ == nullptr || out_->empty());
  }
  // Sent its last response and discards input until the client's EOF (Next::kLinger).
  bool lingering() const { return lingering_; }

  // Deadlines, kept by the worker. Advance sets message_consumed when it consumed a whole
  // request, which restarts the read deadline (RFC 7766 §6.2.3, DESIGN.md Limits).
  bool TakeMessageConsumed() { return std::exchange(message_consumed_, false); }
  SteadyTime read_deadline{};
  bool read_deadline_armed = false;
  bool read_deadline_is_idle = false;
  SteadyTime write_deadline{};
  bool write_deadline_armed = false;
  SteadyTime linger_deadline{};
  bool linger_deadline_armed = false;

  // Kept by the owning worker (its libevent event, its index in the worker's list of parked
  // connections); not moved by TakeOver.
  Worker* worker = nullptr;
  // The peer's address (IPv4 as v4-mapped IPv6), from accept4: handed to the handler
  // (RequestContext::peer) and counted against the per-client limit while parked.
  std::array<uint8_t, 16> peer{};
  bool peer_counted = false;
  struct event* event = nullptr;
  size_t active_index = 0;

 private:
  // Returns false with *next set when the output could not be sent whole.
  bool Flush(const ConnectionEnv& env, Next* next);
  // Counts a connection closed by the peer or by the handler at end of input.
  void CountEndOfInput(const ConnectionEnv& env);
  // Shuts the write side down and starts discarding input (Next::kLinger).
  Next BeginLinger(const ConnectionEnv& env);
  // Reads and drops what the client still sends: kClose at its EOF (or an error, or beyond
  // kLingerMaxBytes), kLinger while it may send more.
  Next Discard(const ConnectionEnv& env);

  int fd_ = -1;
  std::unique_ptr<InputBuffer> in_;
  std::unique_ptr<OutputBuffer> out_;
  bool close_after_write_ = false;
  bool linger_after_write_ = false;
  bool lingering_ = false;
  bool process_after_write_ = false;  // the last Process call consumed something
  size_t discarded_ = 0;
  bool need_process_ = false;
  bool peer_closed_ = false;
  bool served_ = false;
  bool nodelay_ = false;
  bool message_consumed_ = false;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CONNECTION_H_
