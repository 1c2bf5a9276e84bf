#include "server/upstream/upstream_stream_pool.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/time/time.h"

namespace onepass {
namespace {

// Reads per readable event at most, so that one busy upstream cannot starve the listeners
// (level-triggered: the rest is read on the next turn).
constexpr int kReadsPerEvent = 16;

}  // namespace

UpstreamStreamPool::UpstreamStreamPool(IoDriver* driver, std::vector<SocketAddress> upstreams,
                                       const UpstreamStreamConfig& config, WorkerStats* stats,
                                       OnFrame on_frame)
    : driver_(driver),
      upstreams_(std::move(upstreams)),
      config_(config),
      stats_(stats),
      on_frame_(std::move(on_frame)),
      streams_(upstreams_.size()) {
  const int per_upstream = std::max(config_.connections, 1);
  for (size_t u = 0; u < upstreams_.size(); ++u) {
    for (int i = 0; i < per_upstream; ++i) {
      streams_[u].push_back(std::make_unique<Stream>(this, static_cast<int>(u), config_));
    }
  }
}

// Each stream's watches and timer go with it, before the driver.
UpstreamStreamPool::~UpstreamStreamPool() = default;

void UpstreamStreamPool::SetUpstreams(const std::vector<SocketAddress>& upstreams) {
  const int per_upstream = std::max(config_.connections, 1);
  while (streams_.size() < upstreams.size()) {
    const int u = static_cast<int>(streams_.size());
    streams_.emplace_back();
    for (int i = 0; i < per_upstream; ++i) {
      streams_[u].push_back(std::make_unique<Stream>(this, u, config_));
    }
    upstreams_.emplace_back();
  }
  for (size_t u = 0; u < upstreams_.size(); ++u) {
    const SocketAddress address = u < upstreams.size() ? upstreams[u] : SocketAddress();
    if (SameAddress(upstreams_[u], address)) continue;
    for (auto& stream : streams_[u]) {
      if (stream->state != State::kClosed) Close(*stream, CloseCause::kRemoved);
    }
    upstreams_[u] = address;
  }
}

int UpstreamStreamPool::open_connections(int upstream) const {
  int open = 0;
  for (const auto& stream : streams_[upstream]) open += stream->state != State::kClosed;
  return open;
}

UpstreamStreamPool::Stream* UpstreamStreamPool::Choose(int upstream) {
  Stream* best = nullptr;
  Stream* closed = nullptr;
  for (auto& stream : streams_[upstream]) {
    if (stream->state == State::kClosed) {
      if (closed == nullptr) closed = stream.get();
    } else if (best == nullptr || stream->outstanding < best->outstanding) {
      best = stream.get();
    }
  }
  // A new connection only while every open one is busy: pipelining on few connections is
  // what RFC 7766 §6.2.1.1 asks of clients, and each connection costs the upstream a slot.
  if (best != nullptr && (best->outstanding == 0 || closed == nullptr)) return best;
  if (closed != nullptr && Connect(*closed)) return closed;
  return best;
}

bool UpstreamStreamPool::Connect(Stream& stream) {
  const SocketAddress& address = upstreams_[stream.upstream];
  if (address.length == 0) return false;  // vacant: SendFrame counts the drop
  stream.fd.Reset(socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!stream.fd.valid()) {
    WorkerStats::Add(stats_->upstream_stream_connect_errors);
    return false;
  }
  // Pipelined requests must not wait for the ACK of the previous one (Nagle).
  const int one = 1;
  setsockopt(stream.fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (connect(stream.fd.get(), address.get(), address.length) != 0 && errno != EINPROGRESS) {
    stream.fd.Reset();
    WorkerStats::Add(stats_->upstream_stream_connect_errors);
    return false;
  }
  stream.read_watch.Arm(stream.fd.get(), Interest::kReadable, /*persistent=*/true);
  stream.write_watch.Arm(stream.fd.get(), Interest::kWritable);
  // Writable means connected (or failed: SO_ERROR says which, in OnWritable).
  stream.state = State::kConnecting;
  ArmTimer(stream);
  return true;
}

bool UpstreamStreamPool::Send(int upstream, absl::Span<const uint8_t> frame) {
  const bool taken = SendFrame(upstream, frame, /*resent=*/false);
  ResendLost();
  return taken;
}

bool UpstreamStreamPool::SendFrame(int upstream, absl::Span<const uint8_t> frame, bool resent) {
  if (upstream < 0 || static_cast<size_t>(upstream) >= streams_.size()) {
    WorkerStats::Add(stats_->upstream_stream_send_errors);
    return false;
  }
  Stream* stream = Choose(upstream);
  if (stream == nullptr || stream->unsent.size() + frame.size() > kMaxUnsentBytes) {
    WorkerStats::Add(stats_->upstream_stream_send_errors);
    return false;
  }
  const bool was_busy = Busy(*stream);
  stream->unsent.insert(stream->unsent.end(), frame.begin(), frame.end());
  ++stream->outstanding;
  if (config_.request_key != nullptr) Keep(*stream, config_.request_key(frame), frame, resent);
  WorkerStats::Add(stats_->upstream_stream_sent);
  // The io timeout runs from the first request of a busy spell and from each frame received,
  // not from each send: a connection that keeps taking requests and answers none is cut.
  if (!was_busy) ArmTimer(*stream);
  if (stream->state != State::kOpen) return true;  // connecting: sent when it is up
  // A send that breaks the connection loses the request to lost_ (with request_key): taken.
  return Flush(*stream) || config_.request_key != nullptr;
}

void UpstreamStreamPool::Keep(Stream& stream, uint64_t key, absl::Span<const uint8_t> frame,
                              bool resent) {
  // A key already kept on this connection (the handler reused it after a deadline) now stands
  // for the newer request.
  Forget(stream, key);
  if (stream.pending_bytes + frame.size() > kMaxKeptBytes) return;
  stream.pending.emplace(key, Pending{std::vector<uint8_t>(frame.begin(), frame.end()), resent});
  stream.pending_bytes += frame.size();
}

void UpstreamStreamPool::Forget(Stream& stream, uint64_t key) {
  auto kept = stream.pending.find(key);
  if (kept == stream.pending.end()) return;
  stream.pending_bytes -= kept->second.frame.size();
  stream.pending.erase(kept);
}

size_t UpstreamStreamPool::kept_bytes(int upstream) const {
  size_t bytes = 0;
  for (const auto& stream : streams_[upstream]) bytes += stream->pending_bytes;
  return bytes;
}

void UpstreamStreamPool::ResendLost() {
  if (resending_) return;
  resending_ = true;
  // A resend may break another connection and add its requests: the loop takes them too.
  while (!lost_.empty()) {
    const Lost lost = std::move(lost_.back());
    lost_.pop_back();
    WorkerStats::Add(stats_->upstream_stream_resent);
    SendFrame(lost.upstream, lost.frame, /*resent=*/true);
  }
  resending_ = false;
}

bool UpstreamStreamPool::Flush(Stream& stream) {
  size_t sent_total = 0;
  while (sent_total < stream.unsent.size()) {
    const ssize_t sent = send(stream.fd.get(), stream.unsent.data() + sent_total,
                              stream.unsent.size() - sent_total, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      Close(stream, CloseCause::kBroken);
      return false;
    }
    sent_total += static_cast<size_t>(sent);
  }
  stream.unsent.erase(stream.unsent.begin(), stream.unsent.begin() + sent_total);
  if (!stream.unsent.empty() && !stream.write_watch.armed()) {
    stream.write_watch.Arm(stream.fd.get(), Interest::kWritable);
  }
  return true;
}

void UpstreamStreamPool::Close(Stream& stream, CloseCause cause) {
  switch (cause) {
    case CloseCause::kIdle:
      WorkerStats::Add(stats_->upstream_stream_idle_closes);
      break;
    case CloseCause::kConnectFailed:
    case CloseCause::kConnectTimeout:
      WorkerStats::Add(stats_->upstream_stream_connect_errors);
      break;
    case CloseCause::kBroken:
    case CloseCause::kSilent:
      WorkerStats::Add(stats_->upstream_stream_lost);
      break;
    case CloseCause::kRemoved:  // a reload: its requests were answered by the handler
      break;
  }
  const bool resend = cause == CloseCause::kBroken || cause == CloseCause::kConnectFailed;
  for (auto& [key, pending] : stream.pending) {
    if (resend && !pending.resent) {
      lost_.push_back({stream.upstream, std::move(pending.frame)});
    } else if (pending.resent) {
      WorkerStats::Add(stats_->upstream_stream_resend_lost);
    }
  }
  stream.pending.clear();
  stream.pending_bytes = 0;
  stream.read_watch.Disarm();
  stream.write_watch.Disarm();
  stream.timer.Cancel();
  stream.fd.Reset();
  stream.state = State::kClosed;
  stream.unsent.clear();
  stream.outstanding = 0;
  stream.reader.Reset();
  ++stream.generation;
}

void UpstreamStreamPool::ArmTimer(Stream& stream) {
  const absl::Duration timeout = Busy(stream) ? config_.io_timeout : config_.idle_timeout;
  stream.timer.ArmAt(std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout));
}

void UpstreamStreamPool::OnWritable(Stream& stream) {
  UpstreamStreamPool* pool = stream.pool;
  const int fd = stream.fd.get();
  if (stream.state == State::kConnecting) {
    int error = 0;
    socklen_t length = sizeof(error);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
      pool->Close(stream, CloseCause::kConnectFailed);
      pool->ResendLost();
      return;
    }
    stream.state = State::kOpen;
    WorkerStats::Add(pool->stats_->upstream_stream_connects);
    pool->ArmTimer(stream);
  }
  pool->Flush(stream);
  pool->ResendLost();
}

void UpstreamStreamPool::OnReadable(Stream& stream) {
  stream.pool->Read(stream);
  stream.pool->ResendLost();
}

void UpstreamStreamPool::Read(Stream& stream) {
  const uint64_t generation = stream.generation;
  for (int reads = 0; reads < kReadsPerEvent; ++reads) {
    const absl::Span<uint8_t> tail = stream.reader.WritableTail();
    const ssize_t received = recv(stream.fd.get(), tail.data(), tail.size(), MSG_DONTWAIT);
    if (received < 0 && errno == EINTR) continue;
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (received <= 0) {
      // EOF or an error (a connect refused shows here too, before writable).
      const bool connecting = stream.state == State::kConnecting;
      const bool idle = !Busy(stream);
      Close(stream, connecting ? CloseCause::kConnectFailed
                    : idle     ? CloseCause::kIdle
                               : CloseCause::kBroken);
      return;
    }
    stream.reader.Commit(static_cast<size_t>(received));
    absl::Span<const uint8_t> frame;
    UpstreamFrameReader::Status status;
    while ((status = stream.reader.Next(frame)) == UpstreamFrameReader::Status::kFrame) {
      WorkerStats::Add(stats_->upstream_stream_received);
      if (stream.outstanding > 0) --stream.outstanding;
      if (config_.request_key != nullptr) Forget(stream, config_.request_key(frame));
      on_frame_(stream.upstream, frame);
      if (stream.generation != generation) return;  // closed by a Send from the callback
    }
    if (status == UpstreamFrameReader::Status::kInvalid) {
      Close(stream, CloseCause::kBroken);
      return;
    }
    ArmTimer(stream);
    if (static_cast<size_t>(received) < tail.size()) break;  // drained
  }
}

void UpstreamStreamPool::OnTimer(Stream& stream) {
  UpstreamStreamPool* pool = stream.pool;
  if (stream.state == State::kConnecting) {
    pool->Close(stream, CloseCause::kConnectTimeout);
  } else if (pool->Busy(stream)) {
    pool->Close(stream, CloseCause::kSilent);  // silent past io_timeout
  } else {
    pool->Close(stream, CloseCause::kIdle);
  }
  pool->ResendLost();
}

}  // namespace onepass
