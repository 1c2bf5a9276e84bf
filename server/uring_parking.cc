// Parked connections of the io_uring loop (server/uring_loop.h): a one-shot poll for what the
// state waits for (none while it waits on upstream answers), the deadline from
// ComputeParkDeadline kept by the loop, closes (a poll is removed before its socket is closed),
// and the drain.
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "common/log.h"
#include "server/connection.h"
#include "server/deadline.h"
#include "server/socket_options.h"
#include "server/stats.h"
#include "server/uring_loop_impl.h"
#include "server/worker.h"
#include "server/worker_metrics.h"

namespace onepass {
namespace {

using uring_internal::AcceptSlot;
using uring_internal::Clock;
using uring_internal::Op;
using uring_internal::SendSlot;
using uring_internal::Slot;
using uring_internal::Tag;

}  // namespace

void UringLoop::OnPollReady(Slot* slot, int result) {
  slot->poll_armed = false;
  if (slot->phase == Slot::Phase::kClosing) {  // closed while its poll was armed
    CloseFd(slot->connection.fd());
    Release(slot);
    return;
  }
  if (result < 0) {  // cannot happen for a socket: never spin on it
    WorkerStats::Add(w_.stats_.reset_errors);
    Close(slot);
    return;
  }
  Lend(slot->connection);
  const ConnectionState state = slot->connection.Advance(w_.env_);
  After(slot, state, /*first=*/false);
}

void UringLoop::After(Slot* slot, ConnectionState state, bool first) {
  Connection& connection = slot->connection;
  w_.FlushUpstream();  // what the handler queued for upstreams during Advance
  if (state == ConnectionState::kClosed) {
    if (first) WorkerStats::Add(w_.stats_.single_pass);
    if (!close_queued_) CloseFd(connection.fd());
    if (slot->phase == Slot::Phase::kParked) Unpark(slot);
    Release(slot);
    return;
  }
  if (state != ConnectionState::kWriting) {
    w_.ReleaseOutput(&connection);
  } else if (!w_.RefillScratchOutput()) {
    // Every output buffer is held by a connection waiting to write (as the libevent loop).
    WorkerStats::Add(w_.stats_.rejected_pool_full);
    Close(slot);
    return;
  }
  if (first) {
    // Idle after its answers: refusing it costs the client nothing (as the libevent loop).
    const bool idle = connection.idle();
    if (static_cast<int>(parked_.size()) >= w_.max_connections_) {
      WorkerStats::Add(idle ? w_.stats_.idle_closes : w_.stats_.rejected_pool_full);
      Close(slot);
      return;
    }
    // The client: the accepted peer, or the one a trusted PROXY header named.
    if (!w_.CountPeer(connection.peer(), &connection)) {
      WorkerStats::Add(idle ? w_.stats_.idle_closes : w_.stats_.rejected_per_client);
      Close(slot);
      return;
    }
    WorkerStats::Add(w_.stats_.parked);
    slot->phase = Slot::Phase::kParked;
    slot->parked_index = parked_.size();
    parked_.push_back(slot);
    w_.metrics_.SetParked(parked_.size());
  }
  Park(slot);
}

void UringLoop::Park(Slot* slot) {
  Connection& connection = slot->connection;
  const ConnectionState state = connection.state();
  TrackUpstream(slot);
  if (state == ConnectionState::kWaitingUpstream) {
    // No socket to poll: the handler delivers each answer (or its SERVFAIL) by its deadline
    // (DeliverUpstream). The deadline is a backstop for answers that can no longer come, as on
    // the libevent loop (Worker::Park).
    slot->deadline = onepass::After(Clock::now(), Worker::kUpstreamBackstop);
    NoteDeadline(slot->deadline);
    return;
  }
  ParkedConnection parked;
  parked.state = state;
  parked.idle = connection.idle();
  parked.message_consumed = state == ConnectionState::kReading && connection.TakeMessageConsumed();
  parked.input_pending = !connection.in().empty();
  parked.deadlines = connection.deadlines();
  if (stopping_ && parked.idle) {
    Close(slot);  // between requests: nothing in flight to finish
    return;
  }
  const SteadyTime now = Clock::now();
  const WorkerLoad load{.parked = parked_.size(), .max_connections = w_.max_connections_};
  const ParkDeadline deadline = ComputeParkDeadline(parked, now, w_.config_, load);
  connection.deadlines() = deadline.deadlines;
  slot->deadline = deadline.at;
  NoteDeadline(deadline.at);
  const bool to_write =
      state == ConnectionState::kWriting || state == ConnectionState::kClosingUnsent;
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_poll_add(sqe, connection.fd(), to_write ? POLLOUT : POLLIN);
  io_uring_sqe_set_data64(sqe, Tag(slot, Op::kPoll));
  slot->poll_armed = true;
}

void UringLoop::Close(Slot* slot) {
  Connection& connection = slot->connection;
  // Closed with answers the client has not taken: abort, as the libevent loop does.
  const ConnectionState state = connection.state();
  if (state == ConnectionState::kWriting || state == ConnectionState::kClosingUnsent) {
    AbortOnClose(connection.fd());
  }
  ForgetUpstream(slot);  // an answer that comes now is an orphan
  if (slot->phase == Slot::Phase::kParked) Unpark(slot);
  if (slot->poll_armed) {
    // The ring holds the socket while its poll is armed: closing the fd now would not close
    // it. The poll's completion (cancelled) closes it and frees the slot.
    slot->phase = Slot::Phase::kClosing;
    io_uring_sqe* sqe = Sqe();
    io_uring_prep_poll_remove(sqe, Tag(slot, Op::kPoll));
    io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(Op::kIgnore));
    return;
  }
  CloseFd(connection.fd());
  Release(slot);
}

void UringLoop::CloseFd(int fd) {
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_close(sqe, fd);
  io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(Op::kIgnore));
}

void UringLoop::Unpark(Slot* slot) {
  Slot* last = parked_.back();
  parked_[slot->parked_index] = last;
  last->parked_index = slot->parked_index;
  parked_.pop_back();
  w_.metrics_.SetParked(parked_.size());
}

void UringLoop::Release(Slot* slot) {
  Connection& connection = slot->connection;
  ForgetUpstream(slot);
  w_.ReleaseOutput(&connection);
  w_.UncountPeer(&connection);
  w_.metrics_.RecordClose(connection.accepted_at, MonotonicNanos());
  connection.Reset(-1);
  slot->phase = Slot::Phase::kFree;
  slot->poll_armed = false;
  free_slots_.push_back(slot);
  --slots_in_use_;
}

void UringLoop::Expire(SteadyTime now) {
  next_deadline_.reset();
  for (size_t i = parked_.size(); i > 0; --i) {
    Slot* slot = parked_[i - 1];
    if (slot->deadline <= now) {
      w_.CountTimeout(slot->connection);
      Close(slot);
    }
  }
  for (const Slot* slot : parked_) NoteDeadline(slot->deadline);
}

void UringLoop::NoteDeadline(SteadyTime at) {
  if (!next_deadline_.has_value() || at < *next_deadline_) next_deadline_ = at;
}

void UringLoop::BeginDrain() {
  stopping_ = true;
  w_.draining_ = true;
  resume_at_.reset();
  // Closing a reuseport listener resets what is in its accept queue: cancel the armed accepts
  // first; once none is left, take what is queued, then close (as Worker::BeginDrain).
  bool armed = false;
  for (const auto& accept : accepts_) {
    if (!accept->armed) continue;
    armed = true;
    io_uring_sqe* sqe = Sqe();
    io_uring_prep_cancel64(sqe, Tag(accept.get(), Op::kAccept), 0);
    io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(Op::kIgnore));
  }
  if (!armed) AcceptQueuedAndCloseListeners();
  for (size_t i = parked_.size(); i > 0; --i) {
    Slot* slot = parked_[i - 1];
    if (slot->connection.idle()) Close(slot);
  }
  drain_deadline_ = Clock::now() + absl::ToChronoNanoseconds(w_.config_.drain_timeout);
}

void UringLoop::AcceptQueuedAndCloseListeners() {
  if (!w_.paused_) {
    for (const ScopedFd& listener : w_.listeners_) {
      for (int i = 0; i < w_.config_.backlog; ++i) {
        sockaddr_storage address{};
        socklen_t length = sizeof(address);
        const int fd = accept4(listener.get(), reinterpret_cast<sockaddr*>(&address), &length,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        WorkerStats::Add(w_.stats_.accepted);
        StartConnection(fd, address);
      }
    }
  }
  w_.CloseListeners();
  listeners_closed_ = true;
}

}  // namespace onepass
