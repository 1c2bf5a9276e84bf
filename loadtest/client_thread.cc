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

namespace onepass::load {
namespace {

constexpr int kMaxEvents = 1024;
// Open loop: at most this many starts per pass, so a late client still reads its responses.
constexpr int kMaxStartsPerPass = 256;
constexpr int64_t kPublishIntervalNs = 250'000'000;
constexpr size_t kReadBufferBytes = 64 * 1024;

// Waits for events up to `timeout_ns` with nanosecond resolution (epoll_pwait2, Linux 5.11),
// falling back to epoll_wait's milliseconds, rounded up, on older kernels.
int WaitForEvents(int epoll_fd, epoll_event* events, int max_events, int64_t timeout_ns) {
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

}  // namespace

ClientThread::ClientThread(const LoadConfig& config, int index, int64_t start_ns,
                           const std::atomic<bool>* stop)
    : config_(config),
      index_(index),
      start_ns_(start_ns),
      stop_(stop),
      requests_(config.protocol, 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(index + 1) << 32) ^
                                     static_cast<uint64_t>(MonotonicNs())) {
  int threads = std::max(config.threads, 1);
  share_ = ThreadShare(config.count, index, threads);
  concurrency_ = config.concurrency / threads + (index < config.concurrency % threads ? 1 : 0);
}

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
  bool open_loop = config_.rate > 0;
  int slots = open_loop ? config_.max_inflight_per_thread : std::max(concurrency_, 1);
  connections_.resize(slots);
  free_slots_.reserve(slots);
  for (int i = slots - 1; i >= 0; --i) free_slots_.push_back(static_cast<uint32_t>(i));

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    stats_.local_error_samples.push_back(absl::StrCat("epoll_create1: ", std::strerror(errno)));
    Publish(MonotonicNs());
    return;
  }
  // All threads begin together at start_ns_.
  WaitUntil(start_ns_);
  int64_t cpu_start = ThreadCpuNs();
  const int64_t sched_start = ThreadSchedNs();
  const int64_t end_ns = start_ns_ + static_cast<int64_t>(config_.duration_s * 1e9);
  // Every connection ends by its own deadline; this cap only guards against a bug.
  const int64_t hard_end_ns =
      end_ns + static_cast<int64_t>(config_.timeout_ms) * 1'000'000 + 1'000'000'000;
  std::optional<Pacer> pacer;
  if (open_loop) pacer.emplace(config_.rate, index_, std::max(config_.threads, 1), start_ns_);
  int64_t next_publish_ns = start_ns_ + kPublishIntervalNs;
  std::vector<epoll_event> events(kMaxEvents);
  bool stopped_by_signal = false;

  while (true) {
    int64_t now = MonotonicNs();
    if (stop_->load(std::memory_order_relaxed)) stopped_by_signal = true;
    bool starting = !stopped_by_signal && now < end_ns && stats_.started < share_;
    bool more_due = false;
    if (starting) {
      int started_now = 0;
      if (open_loop) {
        while (pacer->next_ns() <= now && stats_.started < share_) {
          if (started_now == kMaxStartsPerPass) {
            more_due = true;
            break;
          }
          if (free_slots_.empty()) {
            ++stats_.inflight_cap_waits;
            break;
          }
          StartConnection(pacer->next_ns(), now);
          pacer->Advance();
          ++started_now;
        }
      } else {
        while (inflight_ < concurrency_ && stats_.started < share_ &&
               started_now < kMaxStartsPerPass) {
          StartConnection(now, now);
          ++started_now;
          now = MonotonicNs();
        }
        more_due = inflight_ < concurrency_ && stats_.started < share_;
      }
    } else if (inflight_ == 0) {
      break;
    }
    if (now >= hard_end_ns) break;

    int64_t wake_ns = std::min(next_publish_ns, hard_end_ns);
    if (!deadlines_.empty()) wake_ns = std::min(wake_ns, deadlines_.front().when_ns);
    if (starting) {
      wake_ns = std::min(wake_ns, end_ns);
      if (open_loop && free_slots_.size() > 0) wake_ns = std::min(wake_ns, pacer->next_ns());
    }
    if (more_due) wake_ns = now;
    int n =
        WaitForEvents(epoll_fd_, events.data(), kMaxEvents, std::max<int64_t>(0, wake_ns - now));
    now = MonotonicNs();
    for (int i = 0; i < n; ++i) {
      uint64_t data = events[i].data.u64;
      HandleEvent(static_cast<uint32_t>(data), static_cast<uint32_t>(data >> 32), events[i].events,
                  now);
    }
    ExpireDeadlines(now);
    if (now >= next_publish_ns) {
      stats_.cpu_ns = ThreadCpuNs() - cpu_start;
      stats_.sched_ns = ThreadSchedNs() - sched_start;
      stats_.wall_ns = now - start_ns_;
      Publish(now);
      next_publish_ns += kPublishIntervalNs;
      if (next_publish_ns <= now) next_publish_ns = now + kPublishIntervalNs;
    }
  }
  // Past the hard cap (or never reached): whatever is still open has timed out.
  int64_t now = MonotonicNs();
  for (Connection& connection : connections_) {
    if (connection.state != State::kFree) Finish(connection, false, ErrorKind::kTimeout, now);
  }
  if (open_loop && !stopped_by_signal && stats_.started < share_) {
    stats_.unstarted = std::min(pacer->PendingBefore(end_ns), share_ - stats_.started);
  }
  stats_.cpu_ns = ThreadCpuNs() - cpu_start;
  stats_.sched_ns = ThreadSchedNs() - sched_start;
  stats_.wall_ns = now - start_ns_;
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
  if (config_.rate > 0) {
    int64_t lag = std::max<int64_t>(0, now_ns - intended_ns);
    stats_.start_lag.Record(static_cast<uint64_t>(lag));
    if (lag > ThreadStats::kLateStartNs) ++stats_.late_starts;
  }

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
