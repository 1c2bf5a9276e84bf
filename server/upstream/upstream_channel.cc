#include "server/upstream/upstream_channel.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

// Datagrams read per readable event at most, so that one busy upstream cannot starve the
// listeners (level-triggered: the rest is read on the next turn).
constexpr int kReadsPerEvent = 64;

// Buffers for a socket shared by many requests in flight (requests_per_port > 1): large enough
// for a burst of thousands. A socket for one request keeps the kernel's default, and saves the
// two system calls.
constexpr int kSharedSocketBufferBytes = 4 << 20;

}  // namespace

absl::StatusOr<std::unique_ptr<UpstreamChannel>> UpstreamChannel::Open(
    IoDriver* driver, const std::vector<SocketAddress>& upstreams,
    const UpstreamDatagramConfig& config, WorkerStats* stats, OnDatagram on_datagram) {
  std::unique_ptr<UpstreamChannel> channel(new UpstreamChannel());
  channel->driver_ = driver;
  channel->config_ = config;
  channel->config_.requests_per_port = std::max(1, config.requests_per_port);
  channel->config_.max_ports = std::max(1, config.max_ports);
  channel->stats_ = stats;
  channel->on_datagram_ = std::move(on_datagram);
  channel->upstreams_.resize(upstreams.size());
  for (size_t i = 0; i < upstreams.size(); ++i) {
    channel->upstreams_[i].address = upstreams[i];
    if (upstreams[i].length == 0) continue;  // vacant
    absl::StatusOr<Socket*> socket = channel->OpenSocket(static_cast<int>(i));
    if (!socket.ok()) return socket.status();
    channel->upstreams_[i].current = *socket;
  }
  UpstreamChannel* raw = channel.get();
  channel->linger_timer_ =
      std::make_unique<Timer>(&driver->timers(), [raw] { raw->OnLingerTimer(); });
  raw->OnLingerTimer();
  return channel;
}

// The sockets' watches go with them (sockets_), before the driver.
UpstreamChannel::~UpstreamChannel() = default;

absl::StatusOr<UpstreamChannel::Socket*> UpstreamChannel::OpenSocket(int upstream) {
  const SocketAddress& address = upstreams_[upstream].address;
  auto socket = std::make_unique<Socket>();
  socket->upstream = upstream;
  socket->serial = next_serial_++;
  socket->fd.Reset(::socket(address.family(), SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!socket->fd.valid()) {
    WorkerStats::Add(stats_->upstream_port_open_errors);
    return absl::InternalError(
        absl::StrCat("upstream ", address.ToString(), ": socket: ", std::strerror(errno)));
  }
  if (config_.requests_per_port > 1) {
    const int size = kSharedSocketBufferBytes;
    // Best effort: capped by net.core.{r,w}mem_max.
    setsockopt(socket->fd.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    setsockopt(socket->fd.get(), SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
  }
  // connect() binds the socket to an ephemeral port the kernel draws at random
  // (net.ipv4.ip_local_port_range), and from then on filters datagrams by source.
  if (connect(socket->fd.get(), address.get(), address.length) != 0) {
    WorkerStats::Add(stats_->upstream_port_open_errors);
    return absl::UnavailableError(absl::StrCat("upstream ", address.ToString(),
                                               ": connect: ", std::strerror(errno),
                                               "; check the --dns-backend address"));
  }
  Socket* watched = socket.get();
  socket->watch = std::make_unique<FdWatch>(driver_, [this, watched] { OnReadable(watched); });
  socket->watch->Arm(socket->fd.get(), Interest::kReadable, /*persistent=*/true);
  WorkerStats::Add(stats_->upstream_ports_opened);
  Upstream& owner = upstreams_[upstream];
  socket->member_index = owner.sockets.size();
  owner.sockets.push_back(socket.get());
  Socket* raw = socket.get();
  sockets_.emplace(raw->serial, std::move(socket));
  return raw;
}

UpstreamChannel::Socket* UpstreamChannel::SocketFor(int upstream) {
  Upstream& owner = upstreams_[upstream];
  if (owner.current != nullptr) return owner.current;
  if (owner.address.length == 0) return nullptr;  // vacant
  if (owner.sockets.size() < static_cast<size_t>(config_.max_ports)) {
    absl::StatusOr<Socket*> opened = OpenSocket(upstream);
    if (opened.ok()) {
      owner.current = *opened;
      return owner.current;
    }
  }
  if (owner.sockets.empty()) return nullptr;
  // At the cap, or out of ports or descriptors: share an open socket, drawn at random so that
  // the port stays unpredictable among those open.
  WorkerStats::Add(stats_->upstream_ports_shared);
  return owner.sockets[random_.Below(static_cast<uint32_t>(owner.sockets.size()))];
}

void UpstreamChannel::Send(UpstreamQueue& queue) {
  const Clock::time_point now = Clock::now();
  const auto linger = absl::ToChronoNanoseconds(config_.linger);
  for (size_t i = 0; i < queue.size(); ++i) {
    const int upstream = queue.upstream(i);
    Socket* socket = upstream < 0 || static_cast<size_t>(upstream) >= upstreams_.size()
                         ? nullptr
                         : SocketFor(upstream);
    if (socket == nullptr) {
      WorkerStats::Add(stats_->upstream_send_errors);
      continue;
    }
    const absl::Span<const uint8_t> bytes = queue.bytes(i);
    ssize_t sent;
    do {
      sent = send(socket->fd.get(), bytes.data(), bytes.size(), MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    if (sent < 0) {
      WorkerStats::Add(stats_->upstream_send_errors);
    } else {
      WorkerStats::Add(stats_->upstream_sent);
      if (config_.request_key != nullptr) socket->awaited.push_back(config_.request_key(bytes));
    }
    ++socket->sent;
    socket->last_send = now;
    lingering_.push_back({now + linger, socket->serial});
    if (socket->sent >= config_.requests_per_port) Retire(socket);
  }
  queue.Clear();
}

void UpstreamChannel::Retire(Socket* socket) {
  socket->retired = true;
  Upstream& owner = upstreams_[socket->upstream];
  if (owner.current == socket) owner.current = nullptr;
  if (config_.request_key != nullptr && socket->awaited.empty()) CloseSocket(socket);
}

void UpstreamChannel::CloseSocket(Socket* socket) {
  socket->watch.reset();
  Upstream& owner = upstreams_[socket->upstream];
  if (owner.current == socket) owner.current = nullptr;
  Socket* last = owner.sockets.back();
  owner.sockets[socket->member_index] = last;
  last->member_index = socket->member_index;
  owner.sockets.pop_back();
  sockets_.erase(socket->serial);  // closes the descriptor
}

void UpstreamChannel::CloseLingering(Clock::time_point now) {
  const auto linger = absl::ToChronoNanoseconds(config_.linger);
  while (!lingering_.empty() && lingering_.front().at <= now) {
    const uint64_t serial = lingering_.front().serial;
    lingering_.pop_front();
    const auto it = sockets_.find(serial);
    if (it == sockets_.end()) continue;  // closed when its last reply came
    Socket* socket = it->second.get();
    if (socket->last_send + linger > now) continue;  // a later request: a later entry
    // Its unanswered requests have passed the handler's deadline (linger is longer).
    WorkerStats::Add(stats_->upstream_ports_expired);
    CloseSocket(socket);
  }
}

void UpstreamChannel::OnLingerTimer() {
  const Clock::time_point now = Clock::now();
  CloseLingering(now);
  linger_timer_->ArmAt(
      now + absl::ToChronoNanoseconds(std::max(absl::Milliseconds(10), config_.linger / 4)));
}

void UpstreamChannel::SetUpstreams(const std::vector<SocketAddress>& upstreams) {
  if (upstreams_.size() < upstreams.size()) upstreams_.resize(upstreams.size());
  for (size_t i = 0; i < upstreams_.size(); ++i) {
    const SocketAddress address = i < upstreams.size() ? upstreams[i] : SocketAddress();
    Upstream& owner = upstreams_[i];
    if (SameAddress(owner.address, address)) continue;
    // Closed now: replies to the old upstream's requests have nobody left to take them.
    while (!owner.sockets.empty()) CloseSocket(owner.sockets.back());
    owner.address = address;
  }
  if (streams_ != nullptr) streams_->SetUpstreams(upstreams);
}

void UpstreamChannel::OpenStreams(const std::vector<SocketAddress>& upstreams,
                                  const UpstreamStreamConfig& config, OnDatagram on_frame) {
  streams_ =
      std::make_unique<UpstreamStreamPool>(driver_, upstreams, config, stats_, std::move(on_frame));
}

bool UpstreamChannel::SendStream(int upstream, absl::Span<const uint8_t> frame) {
  if (streams_ == nullptr) {
    WorkerStats::Add(stats_->upstream_stream_send_errors);
    return false;
  }
  return streams_->Send(upstream, frame);
}

void UpstreamChannel::OnReadable(Socket* socket) {
  const int fd = socket->fd.get();
  for (int reads = 0; reads < kReadsPerEvent; ++reads) {
    ssize_t received = recv(fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT);
    if (received < 0) {
      if (errno == EINTR) continue;
      // EAGAIN: drained. ECONNREFUSED (an ICMP port unreachable from a stopped upstream):
      // nothing to read; the handler's deadline answers for the requests.
      if (errno == ECONNREFUSED) continue;
      return;
    }
    WorkerStats::Add(stats_->upstream_received);
    const absl::Span<const uint8_t> datagram(buffer_.data(), static_cast<size_t>(received));
    if (config_.request_key != nullptr) {
      auto& awaited = socket->awaited;
      const auto key = std::find(awaited.begin(), awaited.end(), config_.request_key(datagram));
      if (key == awaited.end()) {
        // Not the reply to a request sent from this port: forged, or a duplicate.
        WorkerStats::Add(stats_->upstream_unexpected);
        continue;
      }
      *key = awaited.back();
      awaited.pop_back();
    }
    const int upstream = socket->upstream;
    const bool done = socket->retired && socket->awaited.empty() && config_.request_key != nullptr;
    // Closed before the callback, which may send (and so open sockets) but never closes one.
    if (done) CloseSocket(socket);
    on_datagram_(upstream, datagram);
    if (done) return;
  }
}

}  // namespace onepass
