#include "loadtest/dot_client_thread.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"
#include "loadtest/client_thread.h"
#include "loadtest/run_clock.h"
#include "loadtest/run_schedule.h"

namespace onepass::load {
namespace {

constexpr int kMaxEvents = 1024;
constexpr size_t kReadBufferBytes = 64 * 1024;

}  // namespace

DotClientThread::DotClientThread(const LoadConfig& config, int index, int64_t start_ns,
                                 const std::atomic<bool>* stop)
    : config_(config),
      index_(index),
      start_ns_(start_ns),
      stop_(stop),
      requests_(config.protocol, 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(index + 1) << 32) ^
                                     static_cast<uint64_t>(MonotonicNs())),
      tickets_(config.tls->options().resume_fraction) {
  exchange_config_.queries_per_conn = std::max(config.queries_per_conn, 1);
  exchange_config_.pipeline = std::clamp(config.pipeline, 1, exchange_config_.queries_per_conn);
  exchange_config_.max_response_bytes = config.max_response_bytes;
  exchange_config_.max_samples = static_cast<size_t>(std::max(config.mismatch_samples, 0));
}

DotClientThread::~DotClientThread() {
  for (Slot& slot : slots_) {
    if (slot.fd >= 0) close(slot.fd);
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void DotClientThread::Run() {
  if (!config_.cpus.empty()) {
    int cpu = config_.cpus[index_ % config_.cpus.size()];
    if (PinCurrentThread(cpu).ok()) stats_.cpu = cpu;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // open-loop starts are paced in microseconds
  read_buffer_.resize(kReadBufferBytes);
  RunSchedule schedule(config_, index_, start_ns_, stop_);
  slots_.resize(static_cast<size_t>(schedule.slots()));
  for (Slot& slot : slots_) {
    slot.tls = std::make_unique<TlsExchange>(
        config_.tls, &tickets_, Exchange(&exchange_config_, &requests_, &stats_), &stats_);
  }
  for (size_t i = slots_.size(); i > 0; --i) free_slots_.push_back(static_cast<uint32_t>(i - 1));
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    stats_.local_error_samples.push_back(absl::StrCat("epoll_create1: ", std::strerror(errno)));
    Publish();
    return;
  }
  schedule.Begin();
  std::vector<epoll_event> events(kMaxEvents);
  while (true) {
    int64_t now = MonotonicNs();
    const std::optional<int64_t> wait = schedule.Pass(
        now, &stats_,
        [this](int64_t intended_ns, int64_t now_ns) { StartConnection(intended_ns, now_ns); },
        [this] { return inflight_; }, [this] { return !free_slots_.empty(); },
        [this]() -> std::optional<int64_t> {
          if (deadlines_.empty()) return std::nullopt;
          return deadlines_.front().when_ns;
        });
    if (!wait.has_value()) break;
    const int64_t wait_ns = *wait;
    const int n = WaitForEpollEvents(epoll_fd_, events.data(), kMaxEvents, wait_ns);
    now = MonotonicNs();
    for (int i = 0; i < n; ++i) {
      const uint64_t data = events[i].data.u64;
      HandleEvent(static_cast<uint32_t>(data), static_cast<uint32_t>(data >> 32), events[i].events,
                  now);
    }
    while (!deadlines_.empty() && deadlines_.front().when_ns <= now) {
      const Deadline expired = deadlines_.front();
      deadlines_.pop_front();
      Slot& slot = slots_[expired.slot];
      if (slot.fd >= 0 && slot.generation == expired.generation) {
        slot.tls->OnTimeout(now);
        FinishIfEnded(slot);
      }
    }
    if (schedule.PublishDue(now, &stats_)) Publish();
  }
  // Past the hard cap (or never reached): whatever is still open has timed out.
  const int64_t now = MonotonicNs();
  for (Slot& slot : slots_) {
    if (!slot.busy) continue;
    slot.tls->OnTimeout(now);
    FinishIfEnded(slot);
  }
  schedule.End(now, &stats_);
  Publish();
}

void DotClientThread::StartConnection(int64_t intended_ns, int64_t now_ns) {
  const uint32_t index = free_slots_.back();
  free_slots_.pop_back();
  Slot& slot = slots_[index];
  ++slot.generation;
  ++inflight_;
  slot.busy = true;
  slot.connecting = true;
  slot.tls->Begin(intended_ns, now_ns);
  if (!slot.tls->active()) {  // TLS set-up failed (counted)
    FinishIfEnded(slot);
    return;
  }
  slot.fd = socket(config_.target.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int error = slot.fd < 0 ? errno : 0;
  if (error == 0 && !config_.sources.empty()) {
    // The address only: connect() picks the port per 4-tuple (IP_BIND_ADDRESS_NO_PORT).
    int one = 1;
    setsockopt(slot.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    const SocketAddress& source =
        config_.sources[(next_source_++ + static_cast<size_t>(index_)) % config_.sources.size()];
    if (bind(slot.fd, source.get(), source.length) != 0) error = errno;
  }
  int rc = -1;
  if (error == 0) {
    rc = connect(slot.fd, config_.target.get(), config_.target.length);
    if (rc != 0 && errno != EINPROGRESS) error = errno;
  }
  if (error == 0) {
    // Edge-triggered, both directions, registered once: no epoll_ctl MOD per connection.
    epoll_event event = {};
    event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    event.data.u64 = (static_cast<uint64_t>(slot.generation) << 32) | index;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, slot.fd, &event) != 0) error = errno;
  }
  if (error != 0) {
    slot.tls->OnConnected(error, now_ns);
    FinishIfEnded(slot);
    return;
  }
  deadlines_.push_back(
      {now_ns + static_cast<int64_t>(config_.timeout_ms) * 1'000'000, index, slot.generation});
  if (rc == 0) {
    slot.connecting = false;
    slot.tls->OnConnected(0, now_ns);
    Flush(slot, now_ns);
    FinishIfEnded(slot);
  }
}

void DotClientThread::HandleEvent(uint32_t index, uint32_t generation, uint32_t events,
                                  int64_t now_ns) {
  if (index >= slots_.size()) return;
  Slot& slot = slots_[index];
  if (slot.fd < 0 || slot.generation != generation) return;
  if (slot.connecting) {
    if (events & (EPOLLERR | EPOLLHUP)) {
      int error = 0;
      socklen_t length = sizeof(error);
      getsockopt(slot.fd, SOL_SOCKET, SO_ERROR, &error, &length);
      slot.tls->OnConnected(error != 0 ? error : ECONNRESET, now_ns);
      FinishIfEnded(slot);
      return;
    }
    if ((events & EPOLLOUT) == 0) return;
    slot.connecting = false;
    slot.tls->OnConnected(0, now_ns);  // the ClientHello
  }
  Flush(slot, now_ns);
  if (slot.tls->active() && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
    Receive(slot, now_ns);
  }
  FinishIfEnded(slot);
}

void DotClientThread::Flush(Slot& slot, int64_t now_ns) {
  while (slot.tls->active() && !slot.tls->unsent().empty()) {
    const absl::string_view bytes = slot.tls->unsent();
    const ssize_t n = send(slot.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      slot.tls->OnSent(static_cast<size_t>(n), now_ns);
    } else if (errno == EAGAIN) {
      return;  // the next EPOLLOUT edge resumes
    } else if (errno != EINTR) {
      slot.tls->OnError(errno, now_ns);
      return;
    }
  }
}

void DotClientThread::Receive(Slot& slot, int64_t now_ns) {
  while (slot.tls->active()) {
    const ssize_t n = recv(slot.fd, read_buffer_.data(), read_buffer_.size(), 0);
    if (n > 0) {
      slot.tls->OnReceived(absl::string_view(read_buffer_.data(), static_cast<size_t>(n)), now_ns);
      Flush(slot, now_ns);  // the Finished and the query, further queries
    } else if (n == 0) {
      slot.tls->OnPeerClosed(now_ns);
    } else if (errno == EAGAIN) {
      return;
    } else if (errno != EINTR) {
      slot.tls->OnError(errno, now_ns);
    }
  }
}

void DotClientThread::FinishIfEnded(Slot& slot) {
  if (!slot.busy || slot.tls->active()) return;
  slot.busy = false;
  if (slot.fd >= 0) {
    // close_notify after a good connection: one try, whatever the server has done meanwhile.
    const absl::string_view last = slot.tls->unsent();
    if (slot.tls->succeeded() && !last.empty()) {
      (void)send(slot.fd, last.data(), last.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    close(slot.fd);  // also leaves the epoll set
    slot.fd = -1;
  }
  slot.connecting = false;
  ++slot.generation;  // events and deadlines of this connection are stale now
  --inflight_;
  free_slots_.push_back(static_cast<uint32_t>(&slot - slots_.data()));
}

void DotClientThread::Publish() {
  std::lock_guard<std::mutex> lock(published_mutex_);
  published_ = stats_;
}

ThreadStats DotClientThread::Snapshot() {
  std::lock_guard<std::mutex> lock(published_mutex_);
  return published_;
}

}  // namespace onepass::load
