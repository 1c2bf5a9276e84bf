// The stream path of a forwarding handler (handlers/handler.h UpstreamStreamConfig): one
// worker's pooled TCP connections to its upstreams, at most `connections` per upstream.
//
// A request goes on the open connection with the fewest requests outstanding; a new
// connection opens (non-blocking connect; requests queue until it is up) only while every
// open one is busy, so a quiet worker keeps one connection per upstream and a busy one
// pipelines on up to `connections` (RFC 7766 §6.2.1.1: several requests in flight on one
// connection, answers in any order). "Outstanding" is frames sent minus frames received on
// the connection: the server knows no protocol, so it cannot tell which request an answer
// is for; the handler matches them.
//
// A connection is closed on EOF, an error, a frame the handler's framer rejects, silence for
// io_timeout while requests are outstanding (or a connect that takes that long), and after
// idle_timeout without requests outstanding; the next request to that upstream opens a new
// one.
//
// Requests a connection lost: with the handler's request_key the pool keeps a copy of each
// request until the frame with its key comes back on that connection; when the connection
// breaks (EOF or reset with requests outstanding, a frame the framer rejects, a failed connect)
// the requests still unanswered are sent once more, unchanged, on another pooled connection
// (an open one, or a new one), after the event at hand is done. A request lost a second time
// is dropped (upstream_stream_resend_lost): the handler's deadline answers for it. A
// connection cut for silence (io_timeout) resends nothing: the upstream is slow, not gone, and
// its requests have run through most of their deadline. Without request_key nothing is resent
// (the server cannot know which requests were answered).
//
// Thread-confined to its worker (events on the worker's event_base); no locks.
#ifndef ONEPASS_SERVER_UPSTREAM_UPSTREAM_STREAM_POOL_H_
#define ONEPASS_SERVER_UPSTREAM_UPSTREAM_STREAM_POOL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "common/scoped_fd.h"
#include "common/socket_address.h"
#include "handlers/handler.h"
#include "server/core/io_driver.h"
#include "server/core/stats.h"
#include "server/core/timer_queue.h"
#include "server/upstream/upstream_frame_reader.h"

namespace onepass {

class UpstreamStreamPool {
 public:
  // Called for each whole frame received: (upstream index, frame). The bytes are valid during
  // the call only. The callback may call Send.
  using OnFrame = std::function<void(int, absl::Span<const uint8_t>)>;

  // Opens nothing yet: connections open on the first request. `config.frame_length` must not
  // be null. Counts into `stats` (upstream_stream_*), which outlives the pool.
  UpstreamStreamPool(IoDriver* driver, std::vector<SocketAddress> upstreams,
                     const UpstreamStreamConfig& config, WorkerStats* stats, OnFrame on_frame);
  ~UpstreamStreamPool();
  UpstreamStreamPool(const UpstreamStreamPool&) = delete;
  UpstreamStreamPool& operator=(const UpstreamStreamPool&) = delete;

  // Sends one framed request to `upstream` on a pooled connection. False when it was dropped
  // (counted: no connection could be opened, or the chosen one has kMaxUnsentBytes unsent); the
  // handler's deadline answers for it then. A request taken and then lost to a broken
  // connection is resent as the header says.
  bool Send(int upstream, absl::Span<const uint8_t> frame);

  // A reload's upstreams (UpstreamChannel::SetUpstreams): the connections of an index whose
  // address changed are closed, their requests dropped (not resent: to another upstream they
  // would be a different request); the others stay. An address of length 0: vacant, Send fails.
  void SetUpstreams(const std::vector<SocketAddress>& upstreams);

  // Connections open or opening to `upstream` (tests and metrics).
  int open_connections(int upstream) const;
  // Bytes of requests kept for a resend on the connections to `upstream` (tests).
  size_t kept_bytes(int upstream) const;

  // Unsent bytes one connection may hold (a stalled upstream must not grow memory).
  static constexpr size_t kMaxUnsentBytes = 256 * 1024;
  // Request bytes one connection keeps for a resend: an upstream that answers only some
  // requests must not grow memory. Past it a request is not kept (not resent if lost).
  static constexpr size_t kMaxKeptBytes = 1024 * 1024;

 private:
  enum class State { kClosed, kConnecting, kOpen };
  // A request sent on a connection and not answered on it yet (with request_key only).
  struct Pending {
    std::vector<uint8_t> frame;
    bool resent = false;  // this is its second connection: not sent a third time
  };
  struct Lost {
    int upstream = 0;
    std::vector<uint8_t> frame;
  };
  struct Stream {
    UpstreamStreamPool* pool = nullptr;
    int upstream = 0;
    State state = State::kClosed;
    ScopedFd fd;
    FdWatch read_watch;   // persistent, while open or connecting
    FdWatch write_watch;  // once, while connecting or bytes are unsent
    Timer timer;          // io_timeout or idle_timeout
    std::vector<uint8_t> unsent;
    size_t outstanding = 0;   // frames sent minus frames received
    uint64_t generation = 0;  // bumped on each close: a callback can tell it was closed
    absl::flat_hash_map<uint64_t, Pending> pending;  // by request_key
    size_t pending_bytes = 0;                        // of the frames in `pending`
    UpstreamFrameReader reader;
    Stream(UpstreamStreamPool* p, int u, const UpstreamStreamConfig& c)
        : pool(p),
          upstream(u),
          read_watch(p->driver_, [this] { OnReadable(*this); }),
          write_watch(p->driver_, [this] { OnWritable(*this); }),
          timer(&p->driver_->timers(), [this] { OnTimer(*this); }),
          reader(c.frame_length, c.max_frame_bytes) {}
  };
  // Why a connection closes, for the counters and for what is resent: kConnectFailed and
  // kBroken lose their pending requests to lost_; kConnectTimeout and kSilent drop them (they
  // waited io_timeout, most of their deadline).
  enum class CloseCause { kIdle, kConnectFailed, kConnectTimeout, kBroken, kSilent, kRemoved };

  // Send, for a first request or (`resent`) one a broken connection lost.
  bool SendFrame(int upstream, absl::Span<const uint8_t> frame, bool resent);
  // Sends each request in lost_ once more. Run after each event and Send, never inside a
  // Close: a resend may open a connection or close one.
  void ResendLost();
  // Keeps `frame` in stream.pending under `key` (replacing one kept there), within
  // kMaxKeptBytes; forgets the one under `key` (Forget).
  void Keep(Stream& stream, uint64_t key, absl::Span<const uint8_t> frame, bool resent);
  void Forget(Stream& stream, uint64_t key);
  // Reads what the upstream sent (OnReadable's work).
  void Read(Stream& stream);
  Stream* Choose(int upstream);
  bool Connect(Stream& stream);
  // Sends what is unsent; waits for writable when the socket is full. False: closed.
  bool Flush(Stream& stream);
  void Close(Stream& stream, CloseCause cause);
  // Arms the timer for the stream's state: io_timeout when busy, idle_timeout when idle.
  void ArmTimer(Stream& stream);
  bool Busy(const Stream& stream) const {
    return stream.state == State::kConnecting || stream.outstanding > 0 || !stream.unsent.empty();
  }
  static void OnReadable(Stream& stream);
  static void OnWritable(Stream& stream);
  static void OnTimer(Stream& stream);

  IoDriver* const driver_;
  std::vector<SocketAddress> upstreams_;  // changed by SetUpstreams only
  const UpstreamStreamConfig config_;
  WorkerStats* const stats_;
  OnFrame on_frame_;
  // streams_[upstream][i]: `connections` slots per upstream, each opened and closed in place.
  std::vector<std::vector<std::unique_ptr<Stream>>> streams_;
  std::vector<Lost> lost_;  // requests broken connections lost, to resend (ResendLost)
  bool resending_ = false;  // inside ResendLost: a nested call returns at once
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_UPSTREAM_UPSTREAM_STREAM_POOL_H_
