#include "loadtest/epoll_client.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "loadtest/client_loop.h"
#include "loadtest/exchange.h"
#include "loadtest/tls_client_context.h"
#include "loadtest/tls_exchange.h"

namespace onepass::load {
namespace {

constexpr int kMaxEvents = 1024;
constexpr size_t kReadBufferBytes = 64 * 1024;

// Waits for events up to `timeout_ns` with nanosecond resolution (epoll_pwait2, Linux 5.11),
// falling back to epoll_wait's milliseconds, rounded up, on older kernels.
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

// What tells the two kinds of connection apart: the machine each slot holds and what is sent
// once it has ended. Plain TCP: the exchange, nothing after the end.
struct PlainTcp {
  using Machine = Exchange;
  explicit PlainTcp(const LoadConfig& config) {}
  std::unique_ptr<Exchange> Make(ClientLoop& loop) {
    return std::make_unique<Exchange>(loop.exchange_config(), loop.requests(), loop.stats());
  }
  static void SendLast(int fd, const Exchange& exchange) {}
};

// DNS over TLS: the TLS machine around the exchange, the thread's tickets to resume with, and
// close_notify after a good connection.
struct DnsOverTls {
  using Machine = TlsExchange;
  explicit DnsOverTls(const LoadConfig& config) : tickets(config.tls->options().resume_fraction) {}
  std::unique_ptr<TlsExchange> Make(ClientLoop& loop) {
    return std::make_unique<TlsExchange>(
        loop.config().tls, &tickets,
        Exchange(loop.exchange_config(), loop.requests(), loop.stats()), loop.stats());
  }
  // One try, whatever the server has done meanwhile (RFC 8446 §6.1).
  static void SendLast(int fd, const TlsExchange& tls) {
    const absl::string_view last = tls.unsent();
    if (tls.succeeded() && !last.empty()) {
      (void)send(fd, last.data(), last.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  }
  TicketStore tickets;  // outlives the slots' machines (declared before them)
};

template <typename Kind>
class EpollClientThread final : public LoadThread {
 public:
  EpollClientThread(const LoadConfig& config, int index, int64_t start_ns,
                    const std::atomic<bool>* stop)
      : loop_(config, index, start_ns, stop), kind_(config) {}
  ~EpollClientThread() override {
    for (Slot& slot : slots_) {
      if (slot.fd >= 0) close(slot.fd);
    }
    if (epoll_fd_ >= 0) close(epoll_fd_);
  }
  EpollClientThread(const EpollClientThread&) = delete;
  EpollClientThread& operator=(const EpollClientThread&) = delete;

  void Run() override { loop_.Run(*this); }
  ThreadStats Snapshot() override { return loop_.Snapshot(); }

  // The core's side of ClientLoop::Run (client_loop.h).
  absl::Status SetUp(int slots);
  void Start(uint32_t index, int64_t origin_ns, int64_t now_ns);
  int64_t Wait(int64_t wait_ns);
  void Expire(uint32_t index, int64_t now_ns) { Abandon(index, now_ns); }
  void Abandon(uint32_t index, int64_t now_ns) {
    slots_[index].machine->OnTimeout(now_ns);
    FinishIfEnded(index);
  }

 private:
  struct Slot {
    int fd = -1;
    bool connecting = false;
    std::unique_ptr<typename Kind::Machine> machine;
  };

  // A non-blocking socket to the target in `slot.fd`, registered for the slot's events; 0 or
  // the errno of the call that failed. `*connected`: connect() finished at once.
  int Open(uint32_t index, bool* connected);
  void HandleEvent(uint32_t index, uint32_t generation, uint32_t events, int64_t now_ns);
  void Flush(Slot& slot, int64_t now_ns);  // sends unsent() until EAGAIN
  void Receive(Slot& slot, int64_t now_ns);
  void FinishIfEnded(uint32_t index);  // the last send, close, the slot given back

  ClientLoop loop_;  // first: the machines below count into its statistics
  Kind kind_;
  int epoll_fd_ = -1;
  std::vector<Slot> slots_;
  std::vector<epoll_event> events_;
  std::vector<char> read_buffer_;
  size_t next_source_ = 0;
};

template <typename Kind>
absl::Status EpollClientThread<Kind>::SetUp(int slots) {
  read_buffer_.resize(kReadBufferBytes);
  events_.resize(kMaxEvents);
  slots_.resize(static_cast<size_t>(slots));
  for (Slot& slot : slots_) slot.machine = kind_.Make(loop_);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) {
    return absl::InternalError(absl::StrCat("epoll_create1: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

template <typename Kind>
void EpollClientThread<Kind>::Start(uint32_t index, int64_t origin_ns, int64_t now_ns) {
  Slot& slot = slots_[index];
  slot.connecting = true;
  slot.machine->Begin(origin_ns, now_ns);
  if (!slot.machine->active()) {  // TLS set-up failed (counted)
    FinishIfEnded(index);
    return;
  }
  bool connected = false;
  if (const int error = Open(index, &connected); error != 0) {
    slot.machine->OnConnected(error, now_ns);
    FinishIfEnded(index);
    return;
  }
  loop_.ArmDeadline(index, now_ns);
  if (connected) {
    slot.connecting = false;
    slot.machine->OnConnected(0, now_ns);
    Flush(slot, now_ns);
    FinishIfEnded(index);
  }
}

template <typename Kind>
int EpollClientThread<Kind>::Open(uint32_t index, bool* connected) {
  const LoadConfig& config = loop_.config();
  Slot& slot = slots_[index];
  slot.fd = socket(config.target.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (slot.fd < 0) return errno;
  if (!config.sources.empty()) {
    // Bind the address only; the port is chosen at connect() per 4-tuple, so each source
    // address brings a whole ephemeral port range (IP_BIND_ADDRESS_NO_PORT, Linux 4.2).
    int one = 1;
    setsockopt(slot.fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    const size_t turn = next_source_++ + static_cast<size_t>(loop_.index());
    const SocketAddress& source = config.sources[turn % config.sources.size()];
    if (bind(slot.fd, source.get(), source.length) != 0) return errno;
  }
  const int rc = connect(slot.fd, config.target.get(), config.target.length);
  if (rc != 0 && errno != EINPROGRESS) return errno;
  // Edge-triggered, registered once for both directions: no epoll_ctl MOD per connection.
  epoll_event event = {};
  event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
  event.data.u64 = (static_cast<uint64_t>(loop_.generation(index)) << 32) | index;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, slot.fd, &event) != 0) return errno;
  *connected = rc == 0;
  return 0;
}

template <typename Kind>
int64_t EpollClientThread<Kind>::Wait(int64_t wait_ns) {
  const int n = WaitForEpollEvents(epoll_fd_, events_.data(), kMaxEvents, wait_ns);
  const int64_t now = MonotonicNs();
  for (int i = 0; i < n; ++i) {
    const uint64_t data = events_[i].data.u64;
    HandleEvent(static_cast<uint32_t>(data), static_cast<uint32_t>(data >> 32), events_[i].events,
                now);
  }
  return now;
}

template <typename Kind>
void EpollClientThread<Kind>::HandleEvent(uint32_t index, uint32_t generation, uint32_t events,
                                          int64_t now_ns) {
  if (index >= slots_.size() || !loop_.busy(index) || loop_.generation(index) != generation) {
    return;  // a late event of a connection that has ended
  }
  Slot& slot = slots_[index];
  if (slot.connecting) {
    if (events & (EPOLLERR | EPOLLHUP)) {
      int error = 0;
      socklen_t length = sizeof(error);
      getsockopt(slot.fd, SOL_SOCKET, SO_ERROR, &error, &length);
      slot.machine->OnConnected(error != 0 ? error : ECONNRESET, now_ns);
      FinishIfEnded(index);
      return;
    }
    if ((events & EPOLLOUT) == 0) return;
    slot.connecting = false;
    slot.machine->OnConnected(0, now_ns);  // the request, or the ClientHello
  }
  Flush(slot, now_ns);
  if (slot.machine->active() && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
    Receive(slot, now_ns);
  }
  FinishIfEnded(index);
}

template <typename Kind>
void EpollClientThread<Kind>::Flush(Slot& slot, int64_t now_ns) {
  while (slot.machine->active() && !slot.machine->unsent().empty()) {
    const absl::string_view bytes = slot.machine->unsent();
    const ssize_t n = send(slot.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      slot.machine->OnSent(static_cast<size_t>(n), now_ns);
    } else if (errno == EAGAIN) {
      return;  // the next EPOLLOUT edge resumes
    } else if (errno != EINTR) {
      slot.machine->OnError(errno, now_ns);
      return;
    }
  }
}

template <typename Kind>
void EpollClientThread<Kind>::Receive(Slot& slot, int64_t now_ns) {
  while (slot.machine->active()) {
    const ssize_t n = recv(slot.fd, read_buffer_.data(), read_buffer_.size(), 0);
    if (n > 0) {
      slot.machine->OnReceived(absl::string_view(read_buffer_.data(), static_cast<size_t>(n)),
                               now_ns);
      Flush(slot, now_ns);  // TLS: the Finished and the query; further queries
    } else if (n == 0) {
      slot.machine->OnPeerClosed(now_ns);
    } else if (errno == EAGAIN) {
      return;
    } else if (errno != EINTR) {
      slot.machine->OnError(errno, now_ns);
    }
  }
}

template <typename Kind>
void EpollClientThread<Kind>::FinishIfEnded(uint32_t index) {
  Slot& slot = slots_[index];
  if (!loop_.busy(index) || slot.machine->active()) return;
  if (slot.fd >= 0) {
    Kind::SendLast(slot.fd, *slot.machine);
    close(slot.fd);  // also leaves the epoll set
    slot.fd = -1;
  }
  slot.connecting = false;
  loop_.Release(index);
}

}  // namespace

std::unique_ptr<LoadThread> MakeEpollClientThread(const LoadConfig& config, int index,
                                                  int64_t start_ns, const std::atomic<bool>* stop) {
  if (config.tls != nullptr) {
    return std::make_unique<EpollClientThread<DnsOverTls>>(config, index, start_ns, stop);
  }
  return std::make_unique<EpollClientThread<PlainTcp>>(config, index, start_ns, stop);
}

}  // namespace onepass::load
