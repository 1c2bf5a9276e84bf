#include "server/drivers/uring/uring_driver.h"

#include <liburing.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/descriptor_table.h"
#include "common/log.h"
#include "server/core/connection.h"
#include "server/core/core_config.h"
#include "server/core/socket_options.h"

namespace onepass {
namespace {

// Ring sizes: every connection in flight costs at most a recv, a send and a close entry.
constexpr unsigned kSubmissionEntries = 1024;
constexpr unsigned kCompletionEntries = 8192;
// Connections between their accept and their first recv's completion: they hold a slot of the
// core's pool beyond the --max-connections parked ones (IoDriver::receives_in_flight).
constexpr int kReceivesInFlight = 1024;
// Last sends in flight (each a kUnsentCheckBytes copy) before a connection sends itself.
constexpr int kMaxSendsInFlight = 4096;
// After Stop, what is still in flight (last sends, their closes) gets this long.
constexpr auto kStopGrace = std::chrono::seconds(1);

// What a completion is for: the low 3 bits of its user_data (pointers are 8-byte aligned).
enum class Op : uint64_t {
  kAccept = 0,  // AcceptSlot*
  kRecv = 1,    // RecvSlot*: the first recv of a connection
  kPoll = 2,    // PollEntry*: a watch's readiness
  kSend = 3,    // SendSlot*: a last send (a close is linked after it)
  kClose = 4,   // fd << 3: the close linked after a last send
  kIgnore = 7,  // plain closes, cancels and poll removals
};
constexpr uint64_t kOpMask = 7;

uint64_t Tag(const void* pointer, Op op) {
  return reinterpret_cast<uintptr_t>(pointer) | static_cast<uint64_t>(op);
}
template <typename T>
T* Untag(uint64_t data) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(data & ~kOpMask));
}

struct AcceptSlot {
  int listener = -1;
  int index = 0;  // of the listener, in listener_fds() order
  sockaddr_storage address{};
  socklen_t address_length = 0;
  bool armed = false;
};

struct RecvSlot {
  ReceiveHandle* handle = nullptr;  // the core's (ConnectionSink::Receive)
};

// One armed poll. Owned by the driver, not the watch: a watch disarmed (its connection closed,
// its slot reused) leaves its entry behind until the poll's completion, which then finds no
// watch and frees the entry. So a late completion can never reach the wrong connection.
struct PollEntry {
  FdWatch* watch = nullptr;
};

struct SendSlot {
  std::array<uint8_t, kUnsentCheckBytes> bytes;
};

class UringDriver final : public IoDriver, public FinalSendQueue {
 public:
  UringDriver(TimerQueue* timers, std::vector<ScopedFd> listeners, int index,
              const DriverOptions& options)
      : IoDriver(timers),
        index_(index),
        backlog_(options.backlog),
        accept_burst_(options.accept_burst > 0 ? options.accept_burst : kDefaultUringAcceptBurst),
        listeners_(std::move(listeners)) {}
  ~UringDriver() override {
    // The ring goes first, so that nothing in flight refers to a buffer freed below (gone
    // already when a worker with a table of its own ran: EndOnThread).
    if (ring_ready_) io_uring_queue_exit(&ring_);
  }
  void EndOnThread() override {
    if (!ring_ready_) return;
    io_uring_submit(&ring_);  // closes queued since Run (WorkerCore::EndOnThread)
    // The ring was set up on the worker's thread (Run), in its descriptor table: with a table of
    // its own, it is closed there. In the process's table the destructor may close it, after
    // the join: then no sibling worker can map a new ring where this one was while it runs
    // (liburing unmaps by a raw syscall, which ThreadSanitizer does not see).
    if (ThisThreadsDescriptorTable() == kProcessDescriptorTable) return;
    io_uring_queue_exit(&ring_);
    ring_ready_ = false;
  }

  void Arm(FdWatch& watch) override;
  void Disarm(FdWatch& watch) override;
  void Forget(FdWatch& watch) override {}
  void CloseSocket(int fd, bool abort) override;
  void SetAccepting(bool on) override;
  void CloseListeners(bool take_queued) override;
  std::vector<int> listener_fds() const override {
    std::vector<int> fds;
    for (const ScopedFd& listener : listeners_) fds.push_back(listener.get());
    return fds;
  }
  void AdoptListenersIntoThisTable() override {
    for (ScopedFd& listener : listeners_) listener.AdoptIntoThisTable();
  }
  FinalSendQueue* final_send() override { return this; }
  int receives_in_flight() const override { return kReceivesInFlight; }
  absl::Status Run() override;
  void Stop() override {
    if (!stop_at_.has_value()) stop_at_ = std::chrono::steady_clock::now();
  }

  // FinalSendQueue.
  bool QueueFinalSend(int fd, absl::Span<const uint8_t> bytes) override;

 private:
  absl::Status Setup();
  io_uring_sqe* Sqe();
  void ArmPoll(FdWatch& watch);
  void ArmAccept(AcceptSlot* slot);
  void StartReceive(int fd, const sockaddr_storage& address, int listener);
  void OnCompletion(const io_uring_cqe& cqe);
  void OnAccepted(AcceptSlot* accept, int result);
  void OnPolled(PollEntry* entry);
  void OnSent(SendSlot* send, int result);
  void FinishCloseListeners();
  bool Idle() const { return sends_in_flight_ == 0 && linked_closes_in_flight_ == 0; }

  const int index_;
  const int backlog_;
  const int accept_burst_;
  std::vector<ScopedFd> listeners_;
  io_uring ring_{};
  bool ring_ready_ = false;
  // Watches armed before the ring exists (Setup arms them).
  std::vector<FdWatch*> pending_;
  std::vector<std::unique_ptr<AcceptSlot>> accepts_;
  std::vector<std::unique_ptr<PollEntry>> polls_;
  std::vector<PollEntry*> free_polls_;
  std::vector<std::unique_ptr<RecvSlot>> recvs_;
  std::vector<RecvSlot*> free_recvs_;
  std::vector<std::unique_ptr<SendSlot>> sends_;
  std::vector<SendSlot*> free_sends_;
  std::vector<io_uring_cqe> deferred_;  // completions moved aside by Sqe
  int sends_in_flight_ = 0;
  int linked_closes_in_flight_ = 0;
  bool accepting_ = false;
  bool closing_listeners_ = false;
  bool take_queued_ = false;
  std::optional<std::chrono::steady_clock::time_point> stop_at_;
};

absl::Status UringDriver::Setup() {
  io_uring_params params{};
  params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
                 IORING_SETUP_DEFER_TASKRUN;
  params.cq_entries = kCompletionEntries;
  int error = io_uring_queue_init_params(kSubmissionEntries, &ring_, &params);
  if (error == -EINVAL) {
    // A kernel before 6.1 lacks DEFER_TASKRUN (task work then runs at any syscall).
    params = io_uring_params{};
    params.flags = IORING_SETUP_CQSIZE;
    params.cq_entries = kCompletionEntries;
    error = io_uring_queue_init_params(kSubmissionEntries, &ring_, &params);
  }
  if (error < 0) {
    return absl::UnavailableError(absl::StrCat("io_uring_queue_init: ", std::strerror(-error)));
  }
  ring_ready_ = true;
  // The ring's fd registered: io_uring_enter skips the fd lookup on every call.
  io_uring_register_ring_fd(&ring_);
  // --accept-burst accepts armed at once per listener, each with its own address slot. Not
  // multishot accept: that writes every connection's address into one buffer, overwritten by
  // the next accept of the same batch, and the address is needed on the single pass (the
  // handler's RequestContext::peer, e.g. the Whois rate limiter) without a getpeername each.
  for (size_t l = 0; l < listeners_.size(); ++l) {
    for (int i = 0; i < accept_burst_; ++i) {
      accepts_.push_back(std::make_unique<AcceptSlot>());
      accepts_.back()->listener = listeners_[l].get();
      accepts_.back()->index = static_cast<int>(l);
    }
  }
  const bool accepting = accepting_;
  accepting_ = false;
  SetAccepting(accepting);
  for (FdWatch* watch : pending_) ArmPoll(*watch);
  pending_.clear();
  return absl::OkStatus();
}

io_uring_sqe* UringDriver::Sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    // The submission queue is full: submit it and take the entry freed. A submit that fails
    // (-EBUSY: the completion queue is full) is retried after the completions are reaped.
    const int submitted = io_uring_submit(&ring_);
    if (submitted < 0 && submitted != -EBUSY && submitted != -EINTR) {
      LogError("worker %d: io_uring_submit: %s", index_, std::strerror(-submitted));
    }
    sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr && submitted <= 0) {
      // Nothing could be submitted: make room in the completion queue by moving its entries
      // aside, handled by Run after this round (never from inside a callback that wants an
      // entry).
      io_uring_cqe* cqe = nullptr;
      while (io_uring_peek_cqe(&ring_, &cqe) == 0 && cqe != nullptr) {
        deferred_.push_back(*cqe);
        io_uring_cqe_seen(&ring_, cqe);
      }
    }
  }
  return sqe;
}

void UringDriver::Arm(FdWatch& watch) {
  if (!ring_ready_) {
    pending_.push_back(&watch);
    return;
  }
  ArmPoll(watch);
}

void UringDriver::ArmPoll(FdWatch& watch) {
  PollEntry* entry;
  if (!free_polls_.empty()) {
    entry = free_polls_.back();
    free_polls_.pop_back();
  } else {
    polls_.push_back(std::make_unique<PollEntry>());
    entry = polls_.back().get();
  }
  entry->watch = &watch;
  watch.driver_data = entry;
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_poll_add(sqe, watch.fd(),
                         watch.interest() == Interest::kReadable ? POLLIN : POLLOUT);
  io_uring_sqe_set_data64(sqe, Tag(entry, Op::kPoll));
}

void UringDriver::Disarm(FdWatch& watch) {
  if (!ring_ready_) {
    pending_.erase(std::remove(pending_.begin(), pending_.end(), &watch), pending_.end());
    return;
  }
  PollEntry* entry = static_cast<PollEntry*>(watch.driver_data);
  watch.driver_data = nullptr;
  if (entry == nullptr) return;
  // The entry stays the driver's until its completion (cancelled, or ready meanwhile). The
  // poll holds a reference to the socket until then, so a close queued after this releases
  // the socket once the poll is gone.
  entry->watch = nullptr;
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_poll_remove(sqe, Tag(entry, Op::kPoll));
  io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(Op::kIgnore));
}

void UringDriver::OnPolled(PollEntry* entry) {
  FdWatch* watch = entry->watch;
  entry->watch = nullptr;
  free_polls_.push_back(entry);
  if (watch == nullptr) return;  // disarmed meanwhile
  watch->driver_data = nullptr;
  // One-shot polls: a persistent watch is armed again before it is told, so that a socket
  // left readable (a read budget spent) completes at once, as level-triggered epoll would.
  if (watch->persistent()) ArmPoll(*watch);
  watch->Fire();
}

void UringDriver::CloseSocket(int fd, bool abort) {
  if (abort) AbortOnClose(fd);
  if (!ring_ready_) {
    close(fd);
    return;
  }
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_close(sqe, fd);
  io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(Op::kIgnore));
}

void UringDriver::SetAccepting(bool on) {
  accepting_ = on;
  if (!on || !ring_ready_ || closing_listeners_) return;
  for (const auto& slot : accepts_) {
    if (!slot->armed) ArmAccept(slot.get());
  }
}

void UringDriver::ArmAccept(AcceptSlot* slot) {
  slot->address_length = sizeof(slot->address);
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_accept(sqe, slot->listener, reinterpret_cast<sockaddr*>(&slot->address),
                       &slot->address_length, SOCK_NONBLOCK | SOCK_CLOEXEC);
  io_uring_sqe_set_data64(sqe, Tag(slot, Op::kAccept));
  slot->armed = true;
}

void UringDriver::OnAccepted(AcceptSlot* accept, int result) {
  accept->armed = false;
  if (result >= 0) {
    StartReceive(result, accept->address, accept->index);
  } else if (result != -ECANCELED && sink_->OnAcceptError(-result) == AcceptNext::kPaused) {
    accepting_ = false;  // armed again when the core resumes (SetAccepting)
  }
  if (accepting_ && !closing_listeners_) ArmAccept(accept);
  if (closing_listeners_ &&
      std::none_of(accepts_.begin(), accepts_.end(), [](const auto& a) { return a->armed; })) {
    FinishCloseListeners();
  }
}

void UringDriver::StartReceive(int fd, const sockaddr_storage& address, int listener) {
  const ConnectionSink::Receive receive = sink_->BeginReceive(fd, address, listener);
  if (receive.handle == nullptr) return;  // refused: the core closed it
  RecvSlot* slot;
  if (!free_recvs_.empty()) {
    slot = free_recvs_.back();
    free_recvs_.pop_back();
  } else {
    recvs_.push_back(std::make_unique<RecvSlot>());
    slot = recvs_.back().get();
  }
  slot->handle = receive.handle;
  // MSG_DONTWAIT: a request not there yet completes with -EAGAIN and the connection parks
  // with its read deadline, instead of a recv waiting in the ring with none.
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_recv(sqe, fd, receive.into.data(), receive.into.size(), MSG_DONTWAIT);
  io_uring_sqe_set_data64(sqe, Tag(slot, Op::kRecv));
}

void UringDriver::CloseListeners(bool take_queued) {
  if (closing_listeners_ || listeners_.empty()) {
    if (listeners_.empty() && !closing_listeners_) sink_->OnListenersClosed();
    return;
  }
  closing_listeners_ = true;
  take_queued_ = take_queued;
  accepting_ = false;
  // Closing a reuseport listener resets what is in its accept queue: cancel the armed accepts
  // first; once none is left, take what is queued, then close (FinishCloseListeners).
  bool armed = false;
  for (const auto& accept : accepts_) {
    if (!accept->armed) continue;
    armed = true;
    io_uring_sqe* sqe = Sqe();
    io_uring_prep_cancel64(sqe, Tag(accept.get(), Op::kAccept), 0);
    io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(Op::kIgnore));
  }
  if (!armed) FinishCloseListeners();
}

void UringDriver::FinishCloseListeners() {
  if (take_queued_) {
    for (size_t l = 0; l < listeners_.size(); ++l) {
      AcceptQueued(listeners_[l].get(), static_cast<int>(l), backlog_,
                   [this](int fd, const sockaddr_storage& address, int listener) {
                     StartReceive(fd, address, listener);
                   });
    }
  }
  listeners_.clear();
  accepts_.clear();
  closing_listeners_ = false;
  sink_->OnListenersClosed();
}

bool UringDriver::QueueFinalSend(int fd, absl::Span<const uint8_t> bytes) {
  if (bytes.size() > kUnsentCheckBytes || !ring_ready_) return false;
  SendSlot* send = nullptr;
  if (!free_sends_.empty()) {
    send = free_sends_.back();
    free_sends_.pop_back();
  } else if (static_cast<int>(sends_.size()) < kMaxSendsInFlight) {
    sends_.push_back(std::make_unique<SendSlot>());
    send = sends_.back().get();
  } else {
    return false;
  }
  std::memcpy(send->bytes.data(), bytes.data(), bytes.size());
  // The send and its close must go in one submission: a link cut at a batch's end would let
  // the close run first.
  if (io_uring_sq_space_left(&ring_) < 2) io_uring_submit(&ring_);
  // MSG_WAITALL: the ring finishes a short send itself, and a send that fails cancels the
  // close linked after it (then closed on its completion). MSG_MORE: the answer leaves with
  // the FIN in one segment, as with the libevent driver (server/core/connection.cc Flush).
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_send(sqe, fd, send->bytes.data(), bytes.size(),
                     MSG_NOSIGNAL | MSG_WAITALL | MSG_MORE);
  io_uring_sqe_set_data64(sqe, Tag(send, Op::kSend));
  sqe->flags |= IOSQE_IO_LINK;
  sqe = Sqe();
  io_uring_prep_close(sqe, fd);
  io_uring_sqe_set_data64(sqe,
                          (static_cast<uint64_t>(fd) << 3) | static_cast<uint64_t>(Op::kClose));
  ++sends_in_flight_;
  ++linked_closes_in_flight_;
  return true;
}

void UringDriver::OnSent(SendSlot* send, int result) {
  // Counted as sent when queued; a send that failed (the client reset) is counted here.
  free_sends_.push_back(send);
  --sends_in_flight_;
  if (result < 0) sink_->OnFinalSendFailed(-result);
}

void UringDriver::OnCompletion(const io_uring_cqe& cqe) {
  const uint64_t data = io_uring_cqe_get_data64(&cqe);
  switch (static_cast<Op>(data & kOpMask)) {
    case Op::kAccept:
      OnAccepted(Untag<AcceptSlot>(data), cqe.res);
      break;
    case Op::kRecv: {
      RecvSlot* slot = Untag<RecvSlot>(data);
      ReceiveHandle* handle = slot->handle;
      free_recvs_.push_back(slot);
      sink_->Received(handle, cqe.res);
      break;
    }
    case Op::kPoll:
      OnPolled(Untag<PollEntry>(data));
      break;
    case Op::kSend:
      OnSent(Untag<SendSlot>(data), cqe.res);
      break;
    case Op::kClose:
      --linked_closes_in_flight_;
      // Cancelled because the send before it failed: the socket is still open.
      if (cqe.res == -ECANCELED) close(static_cast<int>(data >> 3));
      break;
    case Op::kIgnore:
      break;
  }
}

absl::Status UringDriver::Run() {
  if (absl::Status setup = Setup(); !setup.ok()) return setup;
  std::vector<io_uring_cqe*> batch(kCompletionEntries);
  using Clock = std::chrono::steady_clock;
  for (;;) {
    const Clock::time_point now = Clock::now();
    if (stop_at_.has_value() && (Idle() || now >= *stop_at_ + kStopGrace)) break;
    // The wait ends at the next timer; with none armed (before Init arms the heartbeat, after
    // the drain cancels it) a quarter of a second still bounds it, so that a stop requested
    // meanwhile (stop_at_) is seen without a completion to wake the loop.
    Clock::time_point until = now + std::chrono::milliseconds(250);
    if (const std::optional<SteadyTime> next = timers().Next(); next.has_value()) {
      until = std::min(until, *next);
    }
    if (stop_at_.has_value()) until = std::min(until, *stop_at_ + kStopGrace);
    const int64_t wait = std::max<int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(until - now).count(), 0);
    __kernel_timespec timeout{.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
    io_uring_cqe* first = nullptr;
    const int waited = io_uring_submit_and_wait_timeout(&ring_, &first, 1, &timeout, nullptr);
    if (waited < 0 && waited != -ETIME && waited != -EINTR && waited != -EBUSY) {
      LogError("worker %d: io_uring_enter: %s", index_, std::strerror(-waited));
    }
    while (!deferred_.empty()) {
      const std::vector<io_uring_cqe> deferred = std::move(deferred_);
      deferred_.clear();
      for (const io_uring_cqe& cqe : deferred) OnCompletion(cqe);
    }
    // Completions are handled in batches; handling one may queue new entries, never reap.
    for (;;) {
      const unsigned count = io_uring_peek_batch_cqe(&ring_, batch.data(), batch.size());
      if (count == 0) break;
      for (unsigned i = 0; i < count; ++i) OnCompletion(*batch[i]);
      io_uring_cq_advance(&ring_, count);
    }
    timers().RunExpired(Clock::now());
  }
  io_uring_submit(&ring_);  // the last closes
  return absl::OkStatus();
}

}  // namespace

bool UringDriverBuilt() { return true; }

absl::Status ProbeUring() {
  io_uring ring;
  const int error = io_uring_queue_init(4, &ring, 0);
  if (error < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--io=uring: this kernel refuses io_uring (", std::strerror(-error),
        "; see sysctl kernel.io_uring_disabled, or a seccomp filter); use --io=epoll"));
  }
  io_uring_queue_exit(&ring);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<IoDriver>> MakeUringDriver(TimerQueue* timers,
                                                          std::vector<ScopedFd> listeners,
                                                          int index, const DriverOptions& options) {
  return std::make_unique<UringDriver>(timers, std::move(listeners), index, options);
}

}  // namespace onepass
