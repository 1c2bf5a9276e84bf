#include "server/worker.h"

#include <event2/event.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/address_prefix.h"
#include "common/cpu_list.h"
#include "common/log.h"
#include "server/deadline.h"
#include "server/socket_options.h"
#include "server/uring_loop.h"

namespace onepass {
namespace {

// The 16-byte key of an accepted peer: IPv6 as is, IPv4 as v4-mapped IPv6 (::ffff:a.b.c.d);
// all zero for other families.
timeval TimevalFrom(absl::Duration duration) {
  if (duration < absl::ZeroDuration()) duration = absl::ZeroDuration();
  return absl::ToTimeval(duration);
}

absl::Duration Until(SteadyTime deadline, SteadyTime now) {
  return absl::FromChrono(deadline - now);
}

void FreeEvent(event* ev) {
  if (ev != nullptr) event_free(ev);
}
void FreeBase(event_base* base) {
  if (base != nullptr) event_base_free(base);
}

}  // namespace

Worker::Worker(int index, int cpu, std::vector<ScopedFd> listeners,
               std::shared_ptr<const HandlerFactory> factory, const ServerConfig& config,
               const ProxyPolicy& proxy_policy, int max_connections, ClientTable* clients)
    : index_(index),
      cpu_(cpu),
      config_(config),
      max_connections_(max_connections),
      // One byte beyond MaxRequestBytes so that an oversize request is seen as such.
      input_buffer_bytes_(std::max(factory->MaxRequestBytes() + 1, kMinInputBufferBytes)),
      output_buffer_bytes_(factory->OutputBufferBytes()),
      handler_counters_(factory->Counters().size()),
      factory_(std::move(factory)),
      handler_(factory_->CreateHandler(handler_counters_)),
      listeners_(std::move(listeners)),
      clients_(clients),
      base_(nullptr, FreeBase),
      stop_event_(nullptr, FreeEvent),
      offer_event_(nullptr, FreeEvent),
      resume_timer_(nullptr, FreeEvent),
      drain_timer_(nullptr, FreeEvent),
      proxy_policy_(proxy_policy) {
  env_.handler = handler_.get();
  env_.stats = &stats_;
  env_.max_request_bytes = factory_->MaxRequestBytes();
  env_.keepalive = config_.keepalive;
  env_.linger = config_.linger > absl::ZeroDuration();
  if (!proxy_policy_.empty()) env_.proxy = &proxy_policy_;
}

Worker::~Worker() {
  // Connections and events must go before the base.
  upstream_tick_.reset();
  upstream_.reset();
  for (Connection* connection : active_) {
    event_del(connection->event);
    if (connection->fd() >= 0) close(connection->fd());
  }
  pool_.clear();
  scratch_.reset();
  accept_events_.clear();
  stop_event_.reset();
  offer_event_.reset();
  resume_timer_.reset();
  drain_timer_.reset();
  metrics_.StopHeartbeat();
  base_.reset();
}

absl::Status Worker::Init() {
  if (handler_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("the ", factory_->Name(), " handler could not be created"));
  }
  // One event_base per worker thread, used by that thread only: no locking (libevent_core).
  std::unique_ptr<event_config, void (*)(event_config*)> event_cfg(event_config_new(),
                                                                   event_config_free);
  if (event_cfg == nullptr) return absl::ResourceExhaustedError("event_config_new failed");
  event_config_set_flag(event_cfg.get(), EVENT_BASE_FLAG_NOLOCK);
  base_.reset(event_base_new_with_config(event_cfg.get()));
  if (base_ == nullptr) return absl::ResourceExhaustedError("event_base_new failed");

  stop_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!stop_fd_.valid()) {
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  offer_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!offer_fd_.valid()) {
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  stop_event_.reset(
      event_new(base_.get(), stop_fd_.get(), EV_READ | EV_PERSIST, &Worker::OnStopRequested, this));
  offer_event_.reset(event_new(base_.get(), offer_fd_.get(), EV_READ | EV_PERSIST,
                               &Worker::OnHandlerOffered, this));
  resume_timer_.reset(evtimer_new(base_.get(), &Worker::OnAcceptResume, this));
  drain_timer_.reset(evtimer_new(base_.get(), &Worker::OnDrainDeadline, this));
  if (stop_event_ == nullptr || offer_event_ == nullptr || resume_timer_ == nullptr ||
      drain_timer_ == nullptr || event_add(stop_event_.get(), nullptr) != 0 ||
      event_add(offer_event_.get(), nullptr) != 0 ||
      !metrics_.StartHeartbeat(base_.get(), kHeartbeatPeriodMs)) {
    return absl::ResourceExhaustedError("cannot create the worker's events");
  }
  for (const ScopedFd& listener : listeners_) {
    accept_events_.emplace_back(
        event_new(base_.get(), listener.get(), EV_READ | EV_PERSIST, &Worker::OnAcceptable, this),
        FreeEvent);
    if (accept_events_.back() == nullptr) {
      return absl::ResourceExhaustedError("cannot create an accept event");
    }
  }
  // Made for either loop: the io_uring loop runs this event_base too, for the upstreams only
  // (LeaveBaseToUpstreams).
  const std::vector<SocketAddress> upstreams = factory_->Upstreams();
  if (!upstreams.empty()) {
    absl::StatusOr<std::unique_ptr<UpstreamChannel>> channel =
        UpstreamChannel::Open(base_.get(), upstreams, factory_->UpstreamDatagrams(), &stats_,
                              [this](int index, absl::Span<const uint8_t> datagram) {
                                OnUpstreamDatagram(index, datagram);
                              });
    if (!channel.ok()) return channel.status();
    upstream_ = *std::move(channel);
    const UpstreamStreamConfig streams = factory_->UpstreamStreams();
    if (streams.frame_length != nullptr) {
      upstream_->OpenStreams(base_.get(), upstreams, streams,
                             [this](int index, absl::Span<const uint8_t> frame) {
                               OnUpstreamStreamFrame(index, frame);
                             });
    }
    upstream_queue_ = std::make_unique<UpstreamQueue>();
    env_.upstream = upstream_queue_.get();
    upstream_answer_ = std::make_unique<OutputBuffer>(output_buffer_bytes_);
    upstream_tick_ = std::unique_ptr<event, void (*)(event*)>(
        event_new(base_.get(), -1, EV_PERSIST, &Worker::OnUpstreamTick, this), FreeEvent);
    timeval tick = TimevalFrom(factory_->UpstreamTickPeriod());
    if (upstream_tick_ == nullptr || event_add(upstream_tick_.get(), &tick) != 0) {
      return absl::ResourceExhaustedError("cannot create the upstream deadline timer");
    }
  }
  SetAccepting(true);

  pool_.reserve(max_connections_);
  free_.reserve(max_connections_);
  active_.reserve(max_connections_);
  return absl::OkStatus();
}

void Worker::Run() {
  if (cpu_ >= 0) {
    if (absl::Status pinned = PinCurrentThread(cpu_); !pinned.ok()) {
      LogError("worker %d: cannot pin to CPU %d: %s; its connections lose CPU locality", index_,
               cpu_, pinned.message());
    }
  }
  TakePrivateFdTable();
  // Allocated here, after pinning, so that the buffers of the hot path are first touched (and
  // placed, on a NUMA machine) on the worker's own node. The pool grows on this thread too.
  scratch_ = std::make_unique<Connection>(input_buffer_bytes_, output_buffer_bytes_);
  output_buffers_ = 1;
  if (config_.io == IoLoop::kUring) {
    const absl::Status ran = RunUringLoop(*this);
    if (ran.ok()) {
      CloseListeners();
      return;
    }
    // The probe at start passed, so this is rare (memory); serving beats stopping here.
    LogError("worker %d: --io=uring: %s; this worker runs the libevent loop instead", index_,
             ran.message());
  }
  event_base_dispatch(base_.get());
  CloseListeners();
}

// Every thread of a process shares one descriptor table, and accept4 (alloc_fd) and close
// (file_close_fd) take its spinlock, which many workers then contend for
// (docs/design.md "Private descriptor tables"). unshare(CLONE_FILES) gives this thread a copy of
// the table, so the descriptors of its connections live in a table no other thread touches. What
// the copy holds that is not this worker's: the other workers' listeners, closed here (Server
// closes the main thread's copies of every worker's listeners once each worker has its own),
// and descriptors that only keep a file open a little longer (eventfds, epoll instances, the
// metrics socket), released when this thread ends. Everything this worker opens from here on
// (connections, the io_uring ring) is opened and closed on this thread. The frontend's upstream
// sockets are opened on the main thread and kept by ~Worker, so --dns-backend keeps the shared
// table.
void Worker::TakePrivateFdTable() {
  if (!config_.private_fd_tables || upstream_ != nullptr) {
    if (config_.private_fd_tables && index_ == 0) {
      LogInfo(
          "workers share the process's descriptor table: --dns-backend's sockets are opened "
          "before the workers start (--private-fd-tables applies without it)");
    }
    fd_table_.store(FdTable::kShared, std::memory_order_release);
    return;
  }
  if (unshare(CLONE_FILES) != 0) {
    LogWarning(
        "worker %d: unshare(CLONE_FILES): %s; the worker shares the process's "
        "descriptor table (works, slower on many cores)",
        index_, std::strerror(errno));
    fd_table_.store(FdTable::kShared, std::memory_order_release);
    return;
  }
  for (int fd : foreign_listeners_) close(fd);
  fd_table_.store(FdTable::kPrivate, std::memory_order_release);
}

void Worker::RequestStop() {
  uint64_t one = 1;
  ssize_t ignored = write(stop_fd_.get(), &one, sizeof(one));  // eventfd: never short
  (void)ignored;
}

void Worker::OfferHandler(std::shared_ptr<const HandlerFactory> factory,
                          std::unique_ptr<Handler> handler, uint64_t generation) {
  std::unique_ptr<Handler> unused_handler;  // an offer not taken yet, freed outside the lock
  std::shared_ptr<const HandlerFactory> unused_factory;
  {
    std::lock_guard<std::mutex> lock(offer_mutex_);
    unused_handler = std::exchange(offered_handler_, std::move(handler));
    unused_factory = std::exchange(offered_factory_, std::move(factory));
    offered_generation_ = generation;
  }
  uint64_t one = 1;
  ssize_t ignored = write(offer_fd_.get(), &one, sizeof(one));  // eventfd: never short
  (void)ignored;
}

void Worker::OnHandlerOffered(int fd, short what, void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  uint64_t count;
  ssize_t ignored = read(fd, &count, sizeof(count));
  (void)ignored;
  std::unique_ptr<Handler> handler;
  std::shared_ptr<const HandlerFactory> factory;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(worker->offer_mutex_);
    handler = std::move(worker->offered_handler_);
    factory = std::move(worker->offered_factory_);
    generation = worker->offered_generation_;
  }
  if (handler == nullptr) return;  // taken with an earlier wakeup
  // Queries in flight to upstreams, their health and a cache survive the reload in the new
  // handler (a handler without such state takes nothing).
  handler->TakeOver(*worker->handler_);
  // Between events: no Advance is running, so every connection's next call sees the new
  // handler. The old handler goes first, then (if no other worker holds it) the old data.
  worker->handler_ = std::move(handler);
  worker->env_.handler = worker->handler_.get();
  worker->env_.max_request_bytes = factory->MaxRequestBytes();
  worker->factory_ = std::move(factory);
  worker->serving_generation_.store(generation, std::memory_order_release);
  // The gauge, not active_: the io_uring loop keeps its parked connections in its own list.
  LogInfo("worker %d: serving reload %d; %d parked connections continue with it", worker->index_,
          generation, worker->metrics_.Read().parked_now);
}

void Worker::SetAccepting(bool on) {
  if (on == accepting_) return;
  for (auto& accept_event : accept_events_) {
    if (on) {
      event_add(accept_event.get(), nullptr);
    } else {
      event_del(accept_event.get());
    }
  }
  accepting_ = on;
}

void Worker::OnAcceptable(int fd, short what, void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  worker->AcceptBurst(fd, worker->config_.accept_burst);
}

void Worker::AcceptBurst(int listener_fd, int limit) {
  for (int i = 0; i < limit; ++i) {
    // The peer's address comes with the accept: no getpeername per connection.
    sockaddr_storage address{};
    socklen_t address_length = sizeof(address);
    int fd = accept4(listener_fd, reinterpret_cast<sockaddr*>(&address), &address_length,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      switch (errno) {
        case EAGAIN:
#if EAGAIN != EWOULDBLOCK
        case EWOULDBLOCK:
#endif
          return;
        case EINTR:
        case ECONNABORTED:
        // accept(2): errors of the new connection itself, to be treated like EAGAIN + retry.
        case EPROTO:
        case ENETDOWN:
        case ENOPROTOOPT:
        case EHOSTDOWN:
        case ENONET:
        case EHOSTUNREACH:
        case ENETUNREACH:
        case EPERM:
          continue;
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
          PauseAccepting(errno);
          return;
        default:
          // Unexpected and possibly lasting: pausing is what keeps it from spinning.
          WorkerStats::Add(stats_.accept_errors);
          PauseAccepting(errno);
          return;
      }
    }
    WorkerStats::Add(stats_.accepted);
    ServeAccepted(fd, MapAddress(address));
  }
  // The burst is spent; the listener is level-triggered, so the rest waits for the next turn.
}

void Worker::PauseAccepting(int error) {
  WorkerStats::Add(stats_.accept_pauses);
  metrics_.CountAcceptPause(error);
  // Spinning on a listener that stays readable would burn the CPU: stop watching it for a
  // while (docs/design.md "Limits, and why": nginx, NSD). One log line per pause.
  static LogRateLimit limit("accept paused");  // an attack can make this repeat every second
  LogWarningLimited(limit,
                    "worker %d: accept: %s; not accepting for %s (raise the descriptor limit, "
                    "ulimit -n, or lower --max-connections)",
                    index_, std::strerror(error), absl::FormatDuration(config_.accept_pause));
  SetAccepting(false);
  paused_ = true;
  if (resume_timer_ == nullptr) return;  // the io_uring loop resumes on its own clock
  timeval tv = TimevalFrom(config_.accept_pause);
  evtimer_add(resume_timer_.get(), &tv);
}

void Worker::OnAcceptResume(int fd, short what, void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  worker->paused_ = false;
  if (!worker->draining_) worker->SetAccepting(true);
}

void Worker::ServeAccepted(int fd, const std::array<uint8_t, 16>& peer) {
  // The scratch is reset here, once per connection, not again after it is done with.
  const int64_t accepted_at = MonotonicNanos();  // vDSO: no syscall on the single pass
  scratch_->Reset(fd, peer, next_connection_id_++);
  const ConnectionState state = scratch_->Advance(env_);
  FlushUpstream();
  if (state == ConnectionState::kClosed) {
    WorkerStats::Add(stats_.single_pass);
    close(fd);
    metrics_.RecordClose(accepted_at, MonotonicNanos());
    return;
  }
  // A connection left with part of a response keeps the scratch's output buffer, so the
  // scratch needs another before the next single pass.
  const bool keeps_output = state == ConnectionState::kWriting;
  Connection* connection = nullptr;
  if (!keeps_output || spare_outputs_.size() > 0 || output_buffers_ <= max_connections_) {
    connection = AcquireConnection();
  }
  // Kept open only for a next request, with every answer sent: refusing it costs the client
  // nothing it asked for (RFC 7766 §6.2.3: idle connections go first under load).
  const bool idle = scratch_->idle();
  if (connection == nullptr) {
    WorkerStats::Add(idle ? stats_.idle_closes : stats_.rejected_pool_full);
    close(fd);
    return;
  }
  // The client: the accepted peer, or the one a trusted PROXY header named.
  if (!CountPeer(scratch_->peer(), connection)) {
    free_.push_back(connection);
    WorkerStats::Add(idle ? stats_.idle_closes : stats_.rejected_per_client);
    close(fd);
    return;
  }
  connection->TakeOver(*scratch_);  // free pooled connections hold no output buffer
  if (keeps_output) {
    RefillScratchOutput();  // cannot fail: checked above
  } else {
    ReleaseOutput(connection);
  }
  WorkerStats::Add(stats_.parked);
  connection->accepted_at = accepted_at;
  connection->active_index = active_.size();
  active_.push_back(connection);
  metrics_.SetParked(active_.size());
  Park(connection);
}

Connection* Worker::AcquireConnection() {
  if (!free_.empty()) {
    Connection* connection = free_.back();
    free_.pop_back();
    return connection;
  }
  if (static_cast<int>(pool_.size()) >= max_connections_) return nullptr;
  // Grows the pool: allocation happens only until the pool has seen its peak.
  auto connection = std::make_unique<Connection>(input_buffer_bytes_, /*output_capacity=*/0);
  connection->event = event_new(base_.get(), -1, 0, &Worker::OnConnectionEvent, nullptr);
  if (connection->event == nullptr) return nullptr;
  connection->worker = this;
  pool_.push_back(std::move(connection));
  return pool_.back().get();
}

bool Worker::CountPeer(const std::array<uint8_t, 16>& peer, Connection* connection) {
  // Only a connection that parks pays for this (a shard's lock): the single pass never gets
  // here.
  const ClientKey key = ClientKeyOf(peer, config_.client_prefix_v4, config_.client_prefix_v6);
  if (!clients_->TryAcquire(key)) return false;
  connection->client_key = key;
  connection->peer_counted = true;
  return true;
}

void Worker::UncountPeer(Connection* connection) {
  if (!connection->peer_counted) return;
  connection->peer_counted = false;
  clients_->Release(connection->client_key);
}

bool Worker::RefillScratchOutput() {
  if (scratch_->has_output()) return true;
  if (!spare_outputs_.empty()) {
    scratch_->GiveOutput(std::move(spare_outputs_.back()));
    spare_outputs_.pop_back();
    return true;
  }
  if (output_buffers_ > max_connections_) return false;
  scratch_->GiveOutput(std::make_unique<OutputBuffer>(output_buffer_bytes_));
  ++output_buffers_;
  return true;
}

void Worker::ReleaseOutput(Connection* connection) {
  if (!connection->has_output()) return;
  std::unique_ptr<OutputBuffer> out = connection->TakeOutput();
  out->Clear();
  if (!scratch_->has_output()) {
    scratch_->GiveOutput(std::move(out));
  } else {
    spare_outputs_.push_back(std::move(out));
  }
}

void Worker::Park(Connection* connection) {
  const ConnectionState state = connection->state();
  if (connection->upstream_pending() > 0) {
    waiting_upstream_[connection->id()] = connection;
  } else if (!waiting_upstream_.empty()) {
    waiting_upstream_.erase(connection->id());
  }
  if (state == ConnectionState::kWaitingUpstream) {
    // No socket event: the handler delivers each answer (or its SERVFAIL) by its deadline.
    // The timer is a backstop for answers that can no longer come (a reload's new handler).
    event_assign(connection->event, base_.get(), -1, 0, &Worker::OnConnectionEvent, connection);
    timeval tv = TimevalFrom(kUpstreamBackstop);
    event_add(connection->event, &tv);
    return;
  }
  if (draining_ && connection->idle()) {
    Close(connection);  // between requests: nothing in flight to finish
    return;
  }
  const bool to_write =
      state == ConnectionState::kWriting || state == ConnectionState::kClosingUnsent;
  const short flags = to_write ? EV_WRITE : EV_READ;
  ParkedConnection parked;
  parked.state = state;
  parked.idle = connection->idle();
  // Taken only by a wait to read: a request consumed before a partial write restarts the read
  // deadline when the connection next waits to read.
  parked.message_consumed = state == ConnectionState::kReading && connection->TakeMessageConsumed();
  parked.input_pending = !connection->in().empty();
  parked.deadlines = connection->deadlines();
  const SteadyTime now = std::chrono::steady_clock::now();
  const WorkerLoad load{.parked = active_.size(), .max_connections = max_connections_};
  const ParkDeadline deadline = ComputeParkDeadline(parked, now, config_, load);
  connection->deadlines() = deadline.deadlines;
  // A one-shot event with the time left: libevent's own timeouts would restart on each add.
  event_assign(connection->event, base_.get(), connection->fd(), flags, &Worker::OnConnectionEvent,
               connection);
  timeval tv = TimevalFrom(Until(deadline.at, now));
  event_add(connection->event, &tv);
}

void Worker::OnConnectionEvent(int fd, short what, void* arg) {
  Connection* connection = static_cast<Connection*>(arg);
  Worker* worker = connection->worker;
  if (what & EV_TIMEOUT) {
    worker->CountTimeout(*connection);
    worker->Close(connection);
    return;
  }
  if (!connection->has_output()) connection->GiveOutput(worker->scratch_->TakeOutput());
  const ConnectionState state = connection->Advance(worker->env_);
  worker->FlushUpstream();
  worker->AfterAdvance(connection, state);
}

void Worker::AfterAdvance(Connection* connection, ConnectionState state) {
  if (state == ConnectionState::kClosed) {
    Close(connection);
    return;
  }
  if (state != ConnectionState::kWriting) {
    ReleaseOutput(connection);
  } else if (!RefillScratchOutput()) {
    // Every output buffer is held by a connection waiting to write: this one cannot keep its
    // own without leaving the single pass without one.
    WorkerStats::Add(stats_.rejected_pool_full);
    Close(connection);
    return;
  }
  Park(connection);
}

void Worker::OnUpstreamDatagram(int index, absl::Span<const uint8_t> datagram) {
  upstream_answer_->Clear();
  const UpstreamAnswer answer =
      handler_->TakeUpstreamReply(index, datagram, absl::Now(), *upstream_answer_);
  if (answer.resend_over_stream) upstream_->SendStream(index, upstream_answer_->contents());
  if (answer.matched) DeliverUpstream(answer);
  FlushUpstream();
}

void Worker::OnUpstreamStreamFrame(int index, absl::Span<const uint8_t> frame) {
  upstream_answer_->Clear();
  const UpstreamAnswer answer =
      handler_->TakeUpstreamStreamReply(index, frame, absl::Now(), *upstream_answer_);
  if (answer.matched) DeliverUpstream(answer);
  FlushUpstream();
}

void Worker::OnUpstreamTick(int fd, short what, void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  const absl::Time now = absl::Now();
  UpstreamAnswer answer;
  for (;;) {
    worker->upstream_answer_->Clear();
    answer = UpstreamAnswer();
    if (!worker->handler_->TakeExpired(now, *worker->upstream_answer_, answer,
                                       *worker->upstream_queue_)) {
      break;
    }
    if (answer.resend_over_stream) {
      worker->upstream_->SendStream(answer.upstream, worker->upstream_answer_->contents());
    }
    if (answer.matched) worker->DeliverUpstream(answer);
  }
  worker->FlushUpstream();  // health probes
}

void Worker::DeliverUpstream(const UpstreamAnswer& answer) {
  if (uring_ != nullptr) {
    uring_->DeliverUpstream(answer.connection, upstream_answer_->contents());
    return;
  }
  auto it = waiting_upstream_.find(answer.connection);
  if (it == waiting_upstream_.end()) {
    WorkerStats::Add(stats_.upstream_orphans);  // closed meanwhile (or a handler bug)
    return;
  }
  Connection* connection = it->second;
  event_del(connection->event);
  if (!connection->has_output()) {
    connection->GiveOutput(scratch_->TakeOutput());
    if (!RefillScratchOutput()) {
      WorkerStats::Add(stats_.rejected_pool_full);
      Close(connection);
      return;
    }
  }
  if (!connection->DeliverUpstream(upstream_answer_->contents())) {
    // Its output is full of answers the client does not read: it cannot take this one.
    WorkerStats::Add(stats_.write_timeouts);
    Close(connection);
    return;
  }
  const ConnectionState state = connection->Advance(env_);
  FlushUpstream();
  AfterAdvance(connection, state);
}

void Worker::CountTimeout(const Connection& connection) {
  const std::optional<SteadyTime>& lifetime = connection.deadlines().lifetime;
  if (lifetime.has_value() && *lifetime <= std::chrono::steady_clock::now()) {
    WorkerStats::Add(stats_.lifetime_cuts);
    return;
  }
  switch (connection.state()) {
    case ConnectionState::kReading:
      if (connection.deadlines().read_is_idle) {
        // RFC 7766 §6.2.3: the server may close an idle connection; no request was cut.
        WorkerStats::Add(stats_.idle_closes);
      } else {
        WorkerStats::Add(stats_.read_timeouts);
      }
      break;
    case ConnectionState::kWriting:
      WorkerStats::Add(stats_.write_timeouts);
      break;
    case ConnectionState::kClosingUnsent:
      WorkerStats::Add(stats_.unread_aborts);
      break;
    case ConnectionState::kLingering:
      // The response was sent long ago; the client just never closed. Not an error.
      WorkerStats::Add(stats_.linger_cut);
      break;
    case ConnectionState::kWaitingUpstream:
      WorkerStats::Add(stats_.upstream_stuck);
      break;
    case ConnectionState::kProcessing:
    case ConnectionState::kClosed:
      break;  // never parked
  }
}

void Worker::Close(Connection* connection) {
  event_del(connection->event);
  // Closed with answers the client has not taken (a timeout, the lifetime cap, the drain
  // deadline): abort, so that the kernel does not keep them for an orphan (socket_options.h).
  const ConnectionState state = connection->state();
  if (state == ConnectionState::kWriting || state == ConnectionState::kClosingUnsent) {
    AbortOnClose(connection->fd());
  }
  close(connection->fd());
  if (!waiting_upstream_.empty()) waiting_upstream_.erase(connection->id());
  ReleaseOutput(connection);
  UncountPeer(connection);
  connection->Reset(-1);
  // Swap-remove from the parked list.
  Connection* last = active_.back();
  active_[connection->active_index] = last;
  last->active_index = connection->active_index;
  active_.pop_back();
  free_.push_back(connection);
  metrics_.SetParked(active_.size());
  metrics_.RecordClose(connection->accepted_at, MonotonicNanos());
  // Done draining once the listeners are closed (nothing new can come) and nothing is parked.
  if (draining_ && listeners_.empty() && active_.empty()) event_base_loopbreak(base_.get());
}

void Worker::OnStopRequested(int fd, short what, void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  uint64_t count;
  ssize_t ignored = read(fd, &count, sizeof(count));
  (void)ignored;
  if (!worker->draining_) worker->BeginDrain();
}

void Worker::BeginDrain() {
  draining_ = true;
  event_del(resume_timer_.get());
  // Closing a reuseport listener resets the connections still in its accept queue: take them
  // first (bounded by the backlog), then close. New SYNs go to the group's other sockets until
  // those close too; zero loss needs net.ipv4.tcp_migrate_req
  // (docs/design.md "Reloads and restarts").
  if (!paused_) {
    for (const ScopedFd& listener : listeners_) AcceptBurst(listener.get(), config_.backlog);
  }
  CloseListeners();
  // Kept-alive connections between requests have nothing in flight: close them now.
  for (size_t i = active_.size(); i > 0; --i) {
    Connection* connection = active_[i - 1];
    if (connection->idle()) Close(connection);
  }
  if (active_.empty()) {
    event_base_loopbreak(base_.get());
    return;
  }
  timeval tv = TimevalFrom(config_.drain_timeout);
  evtimer_add(drain_timer_.get(), &tv);
}

void Worker::OnDrainDeadline(int fd, short what, void* arg) {
  Worker* worker = static_cast<Worker*>(arg);
  while (!worker->active_.empty()) {
    WorkerStats::Add(worker->stats_.closed_drain);
    worker->Close(worker->active_.back());
  }
  event_base_loopbreak(worker->base_.get());
}

void Worker::LeaveBaseToUpstreams() {
  SetAccepting(false);
  accept_events_.clear();
  stop_event_.reset();
  offer_event_.reset();
  resume_timer_.reset();
  drain_timer_.reset();
  upstream_tick_.reset();  // the ring ticks (UringLoop::RunUpstreams)
  metrics_.StopHeartbeat();
}

void Worker::CloseListeners() {
  SetAccepting(false);
  accept_events_.clear();
  listeners_.clear();
}

}  // namespace onepass
