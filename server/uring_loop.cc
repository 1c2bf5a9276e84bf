#include "server/uring_loop.h"

#include <liburing.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "common/address_prefix.h"
#include "common/log.h"
#include "server/connection.h"
#include "server/server_config.h"
#include "server/stats.h"
#include "server/uring_loop_impl.h"
#include "server/worker.h"
#include "server/worker_metrics.h"

namespace onepass {
namespace {

// Accepts armed at once per listener, each with its own address slot. Not multishot accept:
// that writes every connection's address into one buffer, overwritten by the next accept of
// the same batch, and the address is needed on the single pass (the handler's
// RequestContext::peer, e.g. the Whois rate limiter) without a getpeername per connection.
constexpr int kAcceptsPerListener = 16;
// Ring sizes: every connection in flight costs at most a recv, a send and a close entry.
constexpr unsigned kSubmissionEntries = 1024;
constexpr unsigned kCompletionEntries = 8192;
// Connections between their accept and their first recv's completion, beyond the parked ones
// (--max-connections): they are in the single pass, which the libevent loop does not count.
constexpr int kInFlightSlots = 1024;
// Last sends in flight (each a kUnsentCheckBytes copy) before the connection sends itself.
constexpr int kMaxSendsInFlight = 4096;

using uring_internal::AcceptSlot;
using uring_internal::Clock;
using uring_internal::kOpMask;
using uring_internal::Op;
using uring_internal::SendSlot;
using uring_internal::Slot;
using uring_internal::Tag;
using uring_internal::Wake;

template <typename T>
T* Untag(uint64_t data) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(data & ~kOpMask));
}

}  // namespace

UringLoop::~UringLoop() {
  // Whatever is still open at exit (a drain cut short): the ring goes first, so that nothing
  // in flight refers to a buffer freed below.
  if (ring_ready_) io_uring_queue_exit(&ring_);
  for (const auto& slot : slots_) {
    if (slot->phase != Slot::Phase::kFree && slot->connection.fd() >= 0) {
      close(slot->connection.fd());
    }
  }
  w_.env_.final_send = nullptr;
  w_.uring_ = nullptr;
}

absl::Status UringLoop::Setup() {
  if (w_.upstream_ != nullptr) {
    if (absl::Status found = FindUpstreamBase(); !found.ok()) return found;
  }
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
  // From here on the ring is the loop: the base keeps only the upstreams' events.
  w_.LeaveBaseToUpstreams();
  w_.env_.final_send = this;
  w_.uring_ = this;
  for (const ScopedFd& listener : w_.listeners_) {
    for (int i = 0; i < kAcceptsPerListener; ++i) {
      accepts_.push_back(std::make_unique<AcceptSlot>());
      accepts_.back()->listener = listener.get();
    }
  }
  ArmAccepts();
  ArmWake(Wake::kStop);
  ArmWake(Wake::kOffer);
  if (w_.upstream_ != nullptr) StartUpstreams(Clock::now());
  slots_.reserve(w_.max_connections_ + kInFlightSlots);
  parked_.reserve(w_.max_connections_);
  return absl::OkStatus();
}

io_uring_sqe* UringLoop::Sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  while (sqe == nullptr) {
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

void UringLoop::ArmAccept(AcceptSlot* slot) {
  slot->address_length = sizeof(slot->address);
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_accept(sqe, slot->listener, reinterpret_cast<sockaddr*>(&slot->address),
                       &slot->address_length, SOCK_NONBLOCK | SOCK_CLOEXEC);
  io_uring_sqe_set_data64(sqe, Tag(slot, Op::kAccept));
  slot->armed = true;
}

void UringLoop::ArmAccepts() {
  for (const auto& slot : accepts_) {
    if (!slot->armed) ArmAccept(slot.get());
  }
}

void UringLoop::ArmWake(Wake wake) {
  const int fd = wake == Wake::kStop ? w_.stop_fd_.get() : w_.offer_fd_.get();
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_poll_multishot(sqe, fd, POLLIN);
  io_uring_sqe_set_data64(sqe,
                          (static_cast<uint64_t>(wake) << 3) | static_cast<uint64_t>(Op::kWake));
}

void UringLoop::Run() {
  std::vector<io_uring_cqe*> batch(kCompletionEntries);
  while (!Done()) {
    const SteadyTime now = Clock::now();
    if (give_up_at_.has_value() && now >= *give_up_at_) break;  // the destructor closes the rest
    const int64_t wait = WaitNanos(now);
    __kernel_timespec timeout{.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
    io_uring_cqe* first = nullptr;
    const int waited = io_uring_submit_and_wait_timeout(&ring_, &first, 1, &timeout, nullptr);
    if (waited < 0 && waited != -ETIME && waited != -EINTR && waited != -EBUSY) {
      LogError("worker %d: io_uring_enter: %s", w_.index_, std::strerror(-waited));
    }
    // Completions are handled in batches; handling one may queue new entries, never reap.
    for (;;) {
      const unsigned count = io_uring_peek_batch_cqe(&ring_, batch.data(), batch.size());
      if (count == 0) break;
      for (unsigned i = 0; i < count; ++i) OnCompletion(*batch[i]);
      io_uring_cq_advance(&ring_, count);
    }
    const SteadyTime after = Clock::now();
    if (w_.upstream_ != nullptr) RunUpstreams(after);
    if (after - last_beat_ >= std::chrono::milliseconds(kHeartbeatPeriodMs)) {
      w_.metrics_.Beat();
      last_beat_ = after;
    }
    if (next_deadline_.has_value() && after >= *next_deadline_) Expire(after);
    if (resume_at_.has_value() && after >= *resume_at_) {
      resume_at_.reset();
      w_.paused_ = false;
      if (!stopping_) ArmAccepts();
    }
    if (drain_deadline_.has_value() && after >= *drain_deadline_) {
      drain_deadline_.reset();
      give_up_at_ = after + std::chrono::seconds(1);
      while (!parked_.empty()) {
        WorkerStats::Add(w_.stats_.closed_drain);
        Close(parked_.back());
      }
    }
  }
  io_uring_submit(&ring_);  // the last closes
}

int64_t UringLoop::WaitNanos(SteadyTime now) const {
  SteadyTime until = now + std::chrono::milliseconds(kHeartbeatPeriodMs);
  for (const std::optional<SteadyTime>& at :
       {next_deadline_, resume_at_, drain_deadline_, give_up_at_, next_tick_}) {
    if (at.has_value()) until = std::min(until, *at);
  }
  const int64_t nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(until - now).count();
  return std::max<int64_t>(nanos, 0);
}

bool UringLoop::Done() const {
  // Drained: no listener, no connection held, no last send in flight (its buffer is ours) nor
  // the close linked after it.
  return stopping_ && listeners_closed_ && slots_in_use_ == 0 && sends_in_flight_ == 0 &&
         linked_closes_in_flight_ == 0;
}

void UringLoop::OnCompletion(const io_uring_cqe& cqe) {
  const uint64_t data = io_uring_cqe_get_data64(&cqe);
  switch (static_cast<Op>(data & kOpMask)) {
    case Op::kAccept:
      OnAccepted(Untag<AcceptSlot>(data), cqe.res);
      break;
    case Op::kRecv:
      OnReceived(Untag<Slot>(data), cqe.res);
      break;
    case Op::kPoll:
      OnPollReady(Untag<Slot>(data), cqe.res);
      break;
    case Op::kSend:
      OnSent(Untag<SendSlot>(data), cqe.res);
      break;
    case Op::kClose:
      --linked_closes_in_flight_;
      // Cancelled because the send before it failed: the socket is still open.
      if (cqe.res == -ECANCELED) close(static_cast<int>(data >> 3));
      break;
    case Op::kWake:
      OnWake(static_cast<Wake>(data >> 3), cqe.flags & IORING_CQE_F_MORE);
      break;
    case Op::kUpstreams:
      OnUpstreamsReady(cqe.res);
      break;
    case Op::kIgnore:
      break;
  }
}

void UringLoop::OnWake(Wake wake, bool more) {
  if (!more) ArmWake(wake);  // the kernel ended the multishot poll
  if (wake == Wake::kOffer) {
    // Reads the eventfd, swaps the handler in.
    Worker::OnHandlerOffered(w_.offer_fd_.get(), 0, &w_);
    return;
  }
  uint64_t count;
  ssize_t ignored = read(w_.stop_fd_.get(), &count, sizeof(count));
  (void)ignored;
  if (!stopping_) BeginDrain();
}

void UringLoop::OnAccepted(AcceptSlot* accept, int result) {
  accept->armed = false;
  if (result >= 0) {
    WorkerStats::Add(w_.stats_.accepted);
    StartConnection(result, accept->address);
    if (!stopping_ && !w_.paused_) ArmAccept(accept);
  } else {
    switch (-result) {
      case ECANCELED:  // the drain cancelled it
        break;
      case EMFILE:
      case ENFILE:
      case ENOBUFS:
      case ENOMEM:
        if (!w_.paused_) {
          w_.PauseAccepting(-result);  // counts and logs; sets paused_
          resume_at_ = Clock::now() + absl::ToChronoNanoseconds(w_.config_.accept_pause);
        }
        break;
      case EINTR:
      case EAGAIN:
      case ECONNABORTED:
      case EPROTO:
      case ENETDOWN:
      case ENOPROTOOPT:
      case EHOSTDOWN:
      case ENONET:
      case EHOSTUNREACH:
      case ENETUNREACH:
      case EPERM:
        // accept(2): errors of the new connection itself, to be treated like EAGAIN + retry.
        if (!stopping_ && !w_.paused_) ArmAccept(accept);
        break;
      default:
        WorkerStats::Add(w_.stats_.accept_errors);
        if (!w_.paused_) {
          w_.PauseAccepting(-result);
          resume_at_ = Clock::now() + absl::ToChronoNanoseconds(w_.config_.accept_pause);
        }
        break;
    }
  }
  if (stopping_ && !listeners_closed_ &&
      std::none_of(accepts_.begin(), accepts_.end(), [](const auto& a) { return a->armed; })) {
    AcceptQueuedAndCloseListeners();
  }
}

Slot* UringLoop::AcquireSlot() {
  if (!free_slots_.empty()) {
    Slot* slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  if (static_cast<int>(slots_.size()) >= w_.max_connections_ + kInFlightSlots) return nullptr;
  // Grows on demand: allocation only until the peak, as the libevent loop's pool.
  slots_.push_back(std::make_unique<Slot>(w_.input_buffer_bytes_));
  slots_.back()->connection.worker = &w_;
  return slots_.back().get();
}

void UringLoop::StartConnection(int fd, const sockaddr_storage& address) {
  Slot* slot = AcquireSlot();
  if (slot == nullptr) {
    WorkerStats::Add(w_.stats_.rejected_pool_full);
    CloseFd(fd);
    return;
  }
  ++slots_in_use_;
  slot->phase = Slot::Phase::kReceiving;
  Connection& connection = slot->connection;
  connection.accepted_at = MonotonicNanos();
  connection.Reset(fd, MapAddress(address), w_.next_connection_id_++);
  // MSG_DONTWAIT: a request not there yet completes with -EAGAIN and the connection parks
  // with its read deadline, instead of a recv waiting in the ring with none.
  const absl::Span<uint8_t> tail = connection.ReceiveTail();
  slot->asked = tail.size();
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_recv(sqe, fd, tail.data(), tail.size(), MSG_DONTWAIT);
  io_uring_sqe_set_data64(sqe, Tag(slot, Op::kRecv));
}

void UringLoop::Lend(Connection& connection) {
  if (!connection.has_output()) connection.GiveOutput(w_.scratch_->TakeOutput());
  current_fd_ = connection.fd();
  close_queued_ = false;
}

void UringLoop::OnReceived(Slot* slot, int result) {
  Connection& connection = slot->connection;
  Lend(connection);
  const ConnectionState state = connection.AdvanceReceived(w_.env_, result, slot->asked);
  After(slot, state, /*first=*/true);
}

bool UringLoop::QueueFinalSend(int fd, absl::Span<const uint8_t> bytes) {
  if (fd != current_fd_ || bytes.size() > kUnsentCheckBytes) return false;
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
  // the FIN in one segment, as on the libevent loop (server/connection.cc Flush).
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
  close_queued_ = true;
  return true;
}

void UringLoop::OnSent(SendSlot* send, int result) {
  // Counted as sent when queued; a send that failed (the client reset) counts here.
  if (result < 0) WorkerStats::Add(w_.stats_.reset_errors);
  free_sends_.push_back(send);
  --sends_in_flight_;
}

bool UringLoopBuilt() { return true; }

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

absl::Status RunUringLoop(Worker& worker) {
  UringLoop loop(worker);
  if (absl::Status setup = loop.Setup(); !setup.ok()) return setup;
  loop.Run();
  return absl::OkStatus();
}

}  // namespace onepass
