#include "server/upstream_channel.h"

#include <event2/event.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

// Datagrams read per readable event at most, so that one busy upstream cannot starve the
// listeners (level-triggered: the rest is read on the next turn).
constexpr int kReadsPerEvent = 64;

// Socket buffers large enough for a burst of thousands of queries in flight.
constexpr int kSocketBufferBytes = 4 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<UpstreamChannel>> UpstreamChannel::Open(
    event_base* base, const std::vector<SocketAddress>& upstreams, WorkerStats* stats,
    OnDatagram on_datagram) {
  std::unique_ptr<UpstreamChannel> channel(new UpstreamChannel());
  channel->stats_ = stats;
  channel->on_datagram_ = std::move(on_datagram);
  for (size_t i = 0; i < upstreams.size(); ++i) {
    const SocketAddress& address = upstreams[i];
    auto socket = std::make_unique<Socket>();
    socket->channel = channel.get();
    socket->index = static_cast<int>(i);
    socket->fd.Reset(::socket(address.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!socket->fd.valid()) {
      return absl::InternalError(
          absl::StrCat("upstream ", address.ToString(), ": socket: ", std::strerror(errno)));
    }
    const int size = kSocketBufferBytes;
    // Best effort: capped by net.core.{r,w}mem_max.
    setsockopt(socket->fd.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    setsockopt(socket->fd.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
    if (connect(socket->fd.get(), address.get(), address.length) != 0) {
      return absl::UnavailableError(absl::StrCat("upstream ", address.ToString(),
                                                 ": connect: ", std::strerror(errno),
                                                 "; check the --dns-backend address"));
    }
    socket->event = event_new(base, socket->fd.get(), EV_READ | EV_PERSIST,
                              &UpstreamChannel::OnReadable, socket.get());
    if (socket->event == nullptr || event_add(socket->event, nullptr) != 0) {
      if (socket->event != nullptr) event_free(socket->event);
      return absl::ResourceExhaustedError("cannot create an upstream socket's event");
    }
    channel->sockets_.push_back(std::move(socket));
  }
  return channel;
}

UpstreamChannel::~UpstreamChannel() {
  for (auto& socket : sockets_) {
    if (socket->event != nullptr) event_free(socket->event);
  }
}

void UpstreamChannel::Send(UpstreamQueue& queue) {
  for (size_t i = 0; i < queue.size(); ++i) {
    const int upstream = queue.upstream(i);
    if (upstream < 0 || static_cast<size_t>(upstream) >= sockets_.size()) {
      WorkerStats::Add(stats_->upstream_send_errors);
      continue;
    }
    const absl::Span<const uint8_t> bytes = queue.bytes(i);
    ssize_t sent;
    do {
      sent = send(sockets_[upstream]->fd.get(), bytes.data(), bytes.size(), MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) {
      WorkerStats::Add(stats_->upstream_send_errors);
    } else {
      WorkerStats::Add(stats_->upstream_sent);
    }
  }
  queue.Clear();
}

void UpstreamChannel::OpenStreams(event_base* base, const std::vector<SocketAddress>& upstreams,
                                  const UpstreamStreamConfig& config, OnDatagram on_frame) {
  streams_ =
      std::make_unique<UpstreamStreamPool>(base, upstreams, config, stats_, std::move(on_frame));
}

bool UpstreamChannel::SendStream(int upstream, absl::Span<const uint8_t> frame) {
  if (streams_ == nullptr) {
    WorkerStats::Add(stats_->upstream_stream_send_errors);
    return false;
  }
  return streams_->Send(upstream, frame);
}

void UpstreamChannel::OnReadable(int fd, short what, void* arg) {
  Socket* socket = static_cast<Socket*>(arg);
  UpstreamChannel* channel = socket->channel;
  for (int reads = 0; reads < kReadsPerEvent; ++reads) {
    ssize_t received = recv(fd, channel->buffer_.data(), channel->buffer_.size(), MSG_DONTWAIT);
    if (received < 0) {
      if (errno == EINTR) continue;
      // EAGAIN: drained. ECONNREFUSED (an ICMP port unreachable from a stopped upstream):
      // nothing to read; the handler's deadline answers for the requests.
      if (errno == ECONNREFUSED) continue;
      return;
    }
    WorkerStats::Add(channel->stats_->upstream_received);
    channel->on_datagram_(socket->index, {channel->buffer_.data(), static_cast<size_t>(received)});
  }
}

}  // namespace onepass
