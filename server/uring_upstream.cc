// The io_uring loop's side of a forwarding handler (HandlerFactory::Upstreams, the DNS
// frontend's --dns-backend). The upstream channel (connected UDP sockets) and its stream pool
// (pooled TCP for resent requests) stay on the worker's event_base, as on the libevent loop;
// the ring drives that base instead of blocking in it:
//   - a one-shot poll on the base's epoll instance: when it completes, the base runs once
//     without blocking (event_base_loop EVLOOP_NONBLOCK: the channel's and the pool's
//     callbacks, Worker::OnUpstreamDatagram and OnUpstreamStreamFrame), and the poll is armed
//     again; one-shot, so that a socket left readable (a read budget spent) completes it at once;
//   - the upstream tick on the ring's clock (the ring's wait ends by it): Worker::OnUpstreamTick
//     (the handler's deadlines and health probes) and a run of the base for the pool's timers.
// An answer reaches its connection through DeliverUpstream: a connection that waits on
// upstream is parked with no poll (Park), only a backstop deadline; the answer is appended to
// its output and Advance runs as on the libevent loop, the last send going on the ring with
// its close (QueueFinalSend). Pipelined requests keep the connection parked until every answer
// is sent (Connection::upstream_pending).
#include <event2/event.h>
#include <poll.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/log.h"
#include "server/connection.h"
#include "server/epoll_finder.h"
#include "server/stats.h"
#include "server/uring_loop_impl.h"
#include "server/worker.h"

namespace onepass {
namespace {

using uring_internal::Op;
using uring_internal::Slot;

}  // namespace

absl::Status UringLoop::FindUpstreamBase() {
  // The stop eventfd is registered with the base (Worker::Init) and with no other epoll.
  upstream_epoll_ = FindEpollWatching(w_.stop_fd_.get());
  if (upstream_epoll_ < 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot find the worker's libevent epoll instance in /proc/thread-self/fdinfo (",
        event_base_get_method(w_.base_.get()),
        "), which the ring must poll for the upstreams of --dns-backend; mount /proc, or use "
        "--io=epoll"));
  }
  return absl::OkStatus();
}

void UringLoop::StartUpstreams(SteadyTime now) {
  tick_period_ = absl::ToChronoNanoseconds(w_.factory_->UpstreamTickPeriod());
  next_tick_ = now + tick_period_;
  ArmUpstreamPoll();
}

void UringLoop::ArmUpstreamPoll() {
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_poll_add(sqe, upstream_epoll_, POLLIN);
  io_uring_sqe_set_data64(sqe, static_cast<uint64_t>(Op::kUpstreams));
  upstream_poll_armed_ = true;
}

void UringLoop::OnUpstreamsReady(int result) {
  if (result < 0) {
    // Not seen with an epoll descriptor. Arming it again would spin; the base still runs on
    // every tick, so answers come up to a tick late instead of never.
    LogError(
        "worker %d: the ring's poll on the upstream event_base failed (%s); upstream answers "
        "now wait for the next tick (at most %s): restart with --io=epoll if that matters",
        w_.index_, std::strerror(-result), absl::FormatDuration(w_.factory_->UpstreamTickPeriod()));
    return;  // upstream_poll_armed_ stays set: never armed again
  }
  upstream_poll_armed_ = false;
  upstream_ready_ = true;  // RunUpstreams, after this batch of completions
}

void UringLoop::RunUpstreams(SteadyTime now) {
  const bool tick = now >= *next_tick_;
  if (!upstream_ready_ && !tick) return;
  upstream_ready_ = false;
  event_base_loop(w_.base_.get(), EVLOOP_NONBLOCK);
  if (!upstream_poll_armed_) ArmUpstreamPoll();
  if (tick) {
    Worker::OnUpstreamTick(-1, 0, &w_);
    next_tick_ = now + tick_period_;
  }
}

void UringLoop::TrackUpstream(Slot* slot) {
  const Connection& connection = slot->connection;
  if (connection.upstream_pending() > 0) {
    waiting_upstream_[connection.id()] = slot;
  } else {
    ForgetUpstream(slot);
  }
}

void UringLoop::ForgetUpstream(Slot* slot) {
  if (!waiting_upstream_.empty()) waiting_upstream_.erase(slot->connection.id());
}

void UringLoop::DeliverUpstream(uint64_t id, absl::Span<const uint8_t> answer) {
  const auto it = waiting_upstream_.find(id);
  if (it == waiting_upstream_.end()) {
    WorkerStats::Add(w_.stats_.upstream_orphans);  // closed meanwhile (or a handler bug)
    return;
  }
  Slot* slot = it->second;
  Connection& connection = slot->connection;
  if (slot->poll_armed) {
    // Parked to write an earlier answer, which holds the output: this one goes after it, when
    // the socket is writable again (OnPollReady).
    if (!connection.has_output() || !connection.DeliverUpstream(answer)) {
      WorkerStats::Add(w_.stats_.write_timeouts);  // the client does not read its answers
      Close(slot);
    }
    return;
  }
  Lend(connection);
  if (!connection.DeliverUpstream(answer)) {
    WorkerStats::Add(w_.stats_.write_timeouts);
    Close(slot);
    return;
  }
  const ConnectionState state = connection.Advance(w_.env_);
  After(slot, state, /*first=*/false);
}

}  // namespace onepass
