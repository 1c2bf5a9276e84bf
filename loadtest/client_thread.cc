#include "loadtest/client_thread.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"
#include "loadtest/cpu_accounting.h"
#include "loadtest/pacer.h"
#include "loadtest/run_clock.h"
#include "loadtest/run_schedule.h"

namespace onepass::load {
namespace {

constexpr int kMaxEvents = 1024;
constexpr size_t kReadBufferBytes = 64 * 1024;

}  // namespace

int WaitForEpollEvents(int epoll_fd, epoll_event* events, int max_events, int64_t timeout_ns) {
  static std::atomic<bool> have_pwait2{true};
  if (have_pwait2.load(std::memory_order_relaxed)) {
    timespec timeout = {static_cast<time_t>(timeout_ns / 1'000'000'000),
                        static_cast<long>(timeout_ns % 1'000'000'000)};
    int n = epoll_pwait2(epoll_fd, events, max_events, &timeout, nullptr);
    if (n >= 0 || errno != ENOSYS) return n;
    have_pwait2.store(false, std::memory_order_relaxed);
  }
  return epoll_wait(epoll_fd, events, max_events,
                    static_cast<int>((timeout_ns + 999'999) / 1'000'000));
}

ClientThread::ClientThread(const LoadConfig& config, int index, int64_t start_ns,
                           const std::atomic<bool>* stop)
    : config_(config),
      index_(index),
      start_ns_(start_ns),
      stop_(stop),
      requests_(config.protocol, 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(index + 1) << 32) ^
                                     static_cast<uint64_t>(MonotonicNs())) {}

ClientThread::~ClientThread() {
  for (Connection& connection : connections_) {
    if (connection.fd >= 0) close(connection.fd);
  }
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

void ClientThread::Run() {
  if (!config_.cpus.empty()) {
    int cpu = config_.cpus[index_ % config_.cpus.size()];
    if (PinCurrentThread(cpu).ok()) stats_.cpu = cpu;
  }
  // Open-loop starts are paced in microseconds: ask for precise wakeups (default slack 50 us).
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  read_buffer_.resize(kReadBufferBytes);
  RunSchedule schedule(config_, index_, start_ns_, stop_);
  const int slots = schedule.slots();
  connections_.resize(slots);
  free_slots_.reserve(slots);
  for (int i = slots - 1; i >= 0; --i) free_slots_.push_back(static_cast<uint32_t>(i));

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    stats_.local_error_samples.push_back(absl::StrCat("epoll_create1: ", std::strerror(errno)));
    Publish(MonotonicNs());
    return;
  }
  schedule.Begin();  // all threads begin together
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
    int n = WaitForEpollEvents(epoll_fd_, events.data(), kMaxEvents, wait_ns);
    now = MonotonicNs();
    for (int i = 0; i < n; ++i) {
      uint64_t data = events[i].data.u64;
      HandleEvent(static_cast<uint32_t>(data), static_cast<uint32_t>(data >> 32), events[i].events,
                  now);
    }
    ExpireDeadlines(now);
    if (schedule.PublishDue(now, &stats_)) Publish(now);
  }
  // Past the hard cap (or never reached): whatever is still open has timed out.
  int64_t now = MonotonicNs();
  for (Connection& connection : connections_) {
    if (connection.state != State::kFree) Finish(connection, false, ErrorKind::kTimeout, now);
  }
  schedule.End(now, &stats_);
  Publish(now);
}

bool ClientThread::StartConnection(int64_t intended_ns, int64_t now_ns) {
  uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  Connection& connection = connections_[slot];
  ++stats_.started;
  ++stats_.queries_sent;
  requests_.Next(&connection.request);
  connection.response.clear();
  connection.sent = 0;
  connection.origin_ns = intended_ns;
  connection.deadline_ns = now_ns + static_cast<int64_t>(config_.timeout_ms) * 1'000'000;
  connection.state = State::kConnecting;
  ++connection.generation;
  ++inflight_;

  int fd = socket(config_.target.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    FailErrno(connection, errno, true, now_ns);
    return false;
  }
  connection.fd = fd;
  if (!config_.sources.empty()) {
    // Bind the address only; the port is chosen at connect() per 4-tuple, so each source
    // address brings a whole ephemeral port range (IP_BIND_ADDRESS_NO_PORT, Linux 4.2).
    int one = 1;
    setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    const SocketAddress& source =
        config_.sources[(next_source_++ + index_) % config_.sources.size()];
    if (bind(fd, source.get(), source.length) != 0) {
      FailErrno(connection, errno, true, now_ns);
      return false;
    }
  }
  int rc = connect(fd, config_.target.get(), config_.target.length);
  if (rc != 0 && errno != EINPROGRESS) {
    FailErrno(connection, errno, true, now_ns);
    return false;
  }
  // Edge-triggered, registered once for both directions: no epoll_ctl MOD per connection.
  epoll_event event = {};
  event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  event.data.u64 = (static_cast<uint64_t>(connection.generation) << 32) | slot;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    FailErrno(connection, errno, true, now_ns);
    return false;
  }
  deadlines_.push_back({connection.deadline_ns, slot, connection.generation});
  if (rc == 0) {
    connection.state = State::kWriting;
    TryWrite(connection, now_ns);
  }
  return true;
}

void ClientThread::HandleEvent(uint32_t slot, uint32_t generation, uint32_t events,
                               int64_t now_ns) {
  if (slot >= connections_.size()) return;
  Connection& connection = connections_[slot];
  if (connection.state == State::kFree || connection.generation != generation) return;
  if (connection.state == State::kConnecting) {
    if (events & (EPOLLERR | EPOLLHUP)) {
      int error = 0;
      socklen_t length = sizeof(error);
      getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &error, &length);
      FailErrno(connection, error != 0 ? error : ECONNRESET, true, now_ns);
      return;
    }
    if ((events & EPOLLOUT) == 0) return;
    connection.state = State::kWriting;
  }
  if (connection.state == State::kWriting) {
    if ((events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == 0) return;
    TryWrite(connection, now_ns);
  }
  if (connection.state == State::kReading &&
      (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
    TryRead(connection, now_ns);
  }
}

void ClientThread::TryWrite(Connection& connection, int64_t now_ns) {
  while (connection.sent < connection.request.size()) {
    ssize_t n = send(connection.fd, connection.request.data() + connection.sent,
                     connection.request.size() - connection.sent, MSG_NOSIGNAL);
    if (n > 0) {
      connection.sent += static_cast<size_t>(n);
      stats_.bytes_sent += static_cast<uint64_t>(n);
    } else if (errno == EAGAIN) {
      return;  // the next EPOLLOUT edge resumes
    } else if (errno != EINTR) {
      FailErrno(connection, errno, false, now_ns);
      return;
    }
  }
  connection.state = State::kReading;
}

void ClientThread::TryRead(Connection& connection, int64_t now_ns) {
  while (true) {
    ssize_t n = recv(connection.fd, read_buffer_.data(), read_buffer_.size(), 0);
    if (n > 0) {
      stats_.bytes_received += static_cast<uint64_t>(n);
      if (connection.response.size() + static_cast<size_t>(n) > config_.max_response_bytes) {
        FinishChecked(connection,
                      CheckResult::Wrong("response too large",
                                         absl::StrCat("more than ", config_.max_response_bytes,
                                                      " bytes (--max-response-bytes)")),
                      now_ns);
        return;
      }
      connection.response.append(read_buffer_.data(), static_cast<size_t>(n));
      CheckResult result =
          config_.protocol->Check(connection.request, connection.response, /*closed=*/false);
      if (result.verdict != Verdict::kIncomplete) {
        FinishChecked(connection, result, now_ns);
        return;
      }
    } else if (n == 0) {
      CheckResult result =
          config_.protocol->Check(connection.request, connection.response, /*closed=*/true);
      if (result.verdict == Verdict::kIncomplete) {
        result = CheckResult::Short("closed before a whole response");
      }
      FinishChecked(connection, result, now_ns);
      return;
    } else if (errno == EAGAIN) {
      return;
    } else if (errno != EINTR) {
      FailErrno(connection, errno, false, now_ns);
      return;
    }
  }
}

void ClientThread::FinishChecked(Connection& connection, const CheckResult& result,
                                 int64_t now_ns) {
  if (result.verdict == Verdict::kOk) {
    ++stats_.queries_ok;
    Finish(connection, true, ErrorKind::kWrong, now_ns);
    return;
  }
  Finish(connection, false,
         RecordMismatch(result, static_cast<size_t>(config_.mismatch_samples), &stats_), now_ns);
}

void ClientThread::FailErrno(Connection& connection, int error, bool connecting, int64_t now_ns) {
  ErrorKind kind = ErrorKindOfErrno(error, connecting);
  RecordLocalErrno(kind, error, static_cast<size_t>(config_.mismatch_samples), &stats_);
  Finish(connection, false, kind, now_ns);
}

void ClientThread::Finish(Connection& connection, bool ok, ErrorKind kind, int64_t now_ns) {
  if (ok) {
    ++stats_.ok;
    const uint64_t latency =
        static_cast<uint64_t>(std::max<int64_t>(0, now_ns - connection.origin_ns));
    stats_.latency.Record(latency);
    stats_.query_latency.Record(latency);  // one query per connection here
  } else {
    ++stats_.errors[static_cast<int>(kind)];
  }
  if (connection.fd >= 0) close(connection.fd);  // also leaves the epoll set
  connection.fd = -1;
  connection.state = State::kFree;
  --inflight_;
  free_slots_.push_back(static_cast<uint32_t>(&connection - connections_.data()));
}

void ClientThread::ExpireDeadlines(int64_t now_ns) {
  while (!deadlines_.empty() && deadlines_.front().when_ns <= now_ns) {
    Deadline deadline = deadlines_.front();
    deadlines_.pop_front();
    Connection& connection = connections_[deadline.slot];
    if (connection.state != State::kFree && connection.generation == deadline.generation) {
      Finish(connection, false, ErrorKind::kTimeout, now_ns);
    }
  }
}

void ClientThread::Publish(int64_t now_ns) {
  std::lock_guard<std::mutex> lock(published_mutex_);
  published_ = stats_;
}

ThreadStats ClientThread::Snapshot() {
  std::lock_guard<std::mutex> lock(published_mutex_);
  return published_;
}

}  // namespace onepass::load
