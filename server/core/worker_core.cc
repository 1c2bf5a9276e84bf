#include "server/core/worker_core.h"

#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/address_prefix.h"
#include "common/log.h"
#include "server/core/body_files.h"
#include "server/core/deadline.h"

namespace onepass {

WorkerCore::Slot::Slot(WorkerCore* core, size_t input_bytes)
    : connection(input_bytes, /*output_capacity=*/0),
      watch(core->driver_, [core, this] { core->OnReady(this); }),
      deadline(&core->driver_->timers(), [core, this] { core->OnDeadline(this); }) {
  // Close() and EndOnThread() disarm it before the fd is closed: a kept-open connection's
  // watch stays registered between its requests.
  watch.set_disarms_before_close();
}

WorkerCore::WorkerCore(int index, const CoreConfig& config, const ProxyPolicy& proxy_policy,
                       int max_connections, ClientTable* clients,
                       std::shared_ptr<const HandlerFactory> factory, IoDriver* driver,
                       const SecureListeners& secure)
    : index_(index),
      config_(config),
      proxy_policy_(proxy_policy),
      max_connections_(max_connections),
      first_secure_listener_(secure.transports != nullptr ? secure.first : INT_MAX),
      driver_(driver),
      // One byte beyond MaxRequestBytes so that an oversize request is seen as such.
      input_buffer_bytes_(std::max(factory->MaxRequestBytes() + 1, kMinInputBufferBytes)),
      output_buffer_bytes_(factory->OutputBufferBytes()),
      read_room_(max_connections, /*per_client=*/0),
      handler_counters_(factory->Counters().size()),
      factory_(std::move(factory)),
      handler_(factory_->CreateHandler(handler_counters_)),
      resume_timer_(&driver->timers(),
                    [this] {
                      paused_ = false;
                      if (!draining_) driver_->SetAccepting(true);
                    }),
      drain_timer_(&driver->timers(), [this] { OnDrainDeadline(); }),
      heartbeat_(&driver->timers(), [this] {
        metrics_.Beat();
        CloseBodyFilesNoLongerServed();
        TrimIdleTransports();
        heartbeat_.ArmAt(After(clock_.steady(), absl::Milliseconds(kHeartbeatPeriodMs)));
      }) {
  driver_->set_sink(this);
  env_.handler = handler_.get();
  env_.stats = &stats_;
  env_.clock = &clock_;
  env_.max_request_bytes = factory_->MaxRequestBytes();
  // Learning is off behind a PROXY v2 balancer: the accept gives the balancer's address, the
  // header the client's, and a balancer reuses its connections anyway.
  const bool learn = config_.keepalive_learn && proxy_policy_.empty();
  plain_ = {.keepalive = config_.keepalive,
            .learner = learn ? &plain_reuse_ : nullptr,
            .clients = clients};
  secure_ = {.transports = secure.transports,
             .keepalive = secure.keepalive,
             .learner = learn ? &secure_reuse_ : nullptr,
             .clients = secure.clients != nullptr ? secure.clients : clients};
  env_.linger = config_.linger > absl::ZeroDuration();
  if (!proxy_policy_.empty()) env_.proxy = &proxy_policy_;
  // Checked by Server::CheckConfig: a core made without it (tests) allows everyone.
  if (absl::StatusOr<AllowList> allow = AllowList::FromList(config_.allow_from); allow.ok()) {
    allow_ = *std::move(allow);
  }
  // Behind a balancer the client is known from its header: the connection checks it there.
  if (!allow_.empty() && env_.proxy != nullptr) env_.allow = &allow_;
}

WorkerCore::~WorkerCore() {
  EndOnThread();  // nothing left when the worker's thread ran it
  pool_.clear();
}

void WorkerCore::EndOnThread() {
  // Whatever a drain cut short (or a driver that failed): the sockets go with their watches,
  // before the driver, aborted (their clients get nothing more).
  for (Slot* slot : parked_) {
    slot->watch.Disarm();
    slot->deadline.Cancel();
    if (slot->connection.fd() >= 0 && !slot->connection.close_queued()) {
      driver_->CloseSocket(slot->connection.fd(), /*abort=*/true);
    }
    Release(slot);
  }
  parked_.clear();
  metrics_.SetParked(0);
}

absl::Status WorkerCore::Init() {
  if (handler_ == nullptr) {
    return absl::InternalError(
        absl::StrCat("the ", factory_->Name(), " handler could not be created"));
  }
  metrics_.Beat();
  heartbeat_.ArmAt(After(clock_.steady(), absl::Milliseconds(kHeartbeatPeriodMs)));
  env_.final_send = driver_->final_send();
  driver_->SetAccepting(true);
  pool_.reserve(max_connections_ + driver_->receives_in_flight());
  free_.reserve(max_connections_ + driver_->receives_in_flight());
  parked_.reserve(max_connections_);
  return absl::OkStatus();
}

void WorkerCore::StartOnThread() {
  scratch_ = std::make_unique<Connection>(input_buffer_bytes_, /*output_capacity=*/0);
  outputs_ = std::make_unique<OutputPool>(output_buffer_bytes_, max_connections_);
}

void WorkerCore::SwapHandler(std::shared_ptr<const HandlerFactory> factory,
                             std::unique_ptr<Handler> handler) {
  std::unique_ptr<Handler> old = std::exchange(handler_, std::move(handler));
  // Requests in flight upstream go over to the new handler (or are answered now).
  if (forwarder_ != nullptr) forwarder_->SwapHandler(*factory, *old, *handler_);
  // Between events: no Advance is running, so every connection's next call sees the new
  // handler. The old handler goes first, then (if no other worker holds it) the old data.
  old.reset();
  env_.handler = handler_.get();
  env_.max_request_bytes = factory->MaxRequestBytes();
  factory_ = std::move(factory);
}

// --- accept and the single pass

bool WorkerCore::RefusedByAcl(int fd, const sockaddr_storage& peer, int64_t accepted_at) {
  if (allow_.empty() || env_.proxy != nullptr || allow_.Allows(MapAddress(peer))) return false;
  WorkerStats::Add(stats_.rejected_acl);
  driver_->CloseSocket(fd, /*abort=*/false);
  metrics_.RecordClose(accepted_at, MonotonicNanos());
  return true;
}

void WorkerCore::ServeAccepted(int fd, const sockaddr_storage& peer, int listener) {
  WorkerStats::Add(stats_.accepted);
  const int64_t accepted_at = MonotonicNanos();  // vDSO: no syscall on the single pass
  if (RefusedByAcl(fd, peer, accepted_at)) return;
  // A connection through a transport (TLS) always waits for its client (the handshake's
  // second flight), so it takes a slot now instead of the scratch: its client is counted
  // before the server does any work for it (issue 37: a resolver's address used to be refused
  // after the server's flight, its signature paid for).
  Slot* slot = nullptr;
  if (RoleOf(listener).transports != nullptr) {
    slot = AcquireSlot();
    if (slot == nullptr) {
      WorkerStats::Add(stats_.rejected_pool_full);
      driver_->CloseSocket(fd, /*abort=*/false);
      metrics_.RecordClose(accepted_at, MonotonicNanos());
      return;
    }
  }
  Connection* connection = Open(fd, peer, listener, slot, accepted_at);
  if (connection == nullptr) return;
  outputs_->Lend(*connection);
  FirstTurnDone(*connection, slot, connection->Advance(env_), accepted_at);
}

ConnectionSink::Receive WorkerCore::BeginReceive(int fd, const sockaddr_storage& peer,
                                                 int listener) {
  WorkerStats::Add(stats_.accepted);
  const int64_t accepted_at = MonotonicNanos();
  if (RefusedByAcl(fd, peer, accepted_at)) return {};
  Slot* slot = receiving_ < driver_->receives_in_flight() ? AcquireSlot() : nullptr;
  if (slot == nullptr) {
    WorkerStats::Add(stats_.rejected_pool_full);
    driver_->CloseSocket(fd, /*abort=*/false);
    metrics_.RecordClose(accepted_at, MonotonicNanos());
    return {};
  }
  Connection* connection = Open(fd, peer, listener, slot, accepted_at);
  if (connection == nullptr) return {};
  ++receiving_;
  const absl::Span<uint8_t> into = connection->ReceiveTail();
  slot->asked = into.size();
  return {slot, into};
}

void WorkerCore::Received(ReceiveHandle* handle, ssize_t result) {
  Slot* slot = static_cast<Slot*>(handle);
  --receiving_;
  Connection& connection = slot->connection;
  outputs_->Lend(connection);
  FirstTurnDone(connection, slot, connection.AdvanceReceived(env_, result, slot->asked),
                slot->accepted_at);
}

Connection* WorkerCore::Open(int fd, const sockaddr_storage& peer, int listener, Slot* slot,
                             int64_t accepted_at) {
  Connection& connection = slot != nullptr ? slot->connection : *scratch_;
  if (slot != nullptr) {
    slot->phase = Slot::Phase::kReceiving;
    slot->accepted_at = accepted_at;
  }
  connection.Reset(fd, MapAddress(peer), next_connection_id_++, env_.proxy != nullptr, listener);
  const Role& role = RoleOf(listener);
  DecideKeepOpen(connection, role);
  if (role.transports == nullptr) return &connection;
  if (!connection.StartTransport(*role.transports, slot)) {
    // Counted by the factory (TLS: the library could not make an SSL object).
  } else if (env_.proxy != nullptr || CountPeer(connection.peer(), slot)) {
    // Behind a PROXY v2 balancer the client is known only from the header: counted at park.
    return &connection;
  } else {
    WorkerStats::Add(stats_.rejected_per_client);
  }
  driver_->CloseSocket(fd, /*abort=*/false);
  metrics_.RecordClose(accepted_at, MonotonicNanos());
  if (slot != nullptr) Release(slot);
  return nullptr;
}

void WorkerCore::FirstTurnDone(Connection& connection, Slot* slot, ConnectionState state,
                               int64_t accepted_at) {
  FlushUpstream();
  if (state != ConnectionState::kClosed) {
    Admit(connection, slot, accepted_at);
    return;
  }
  FinishSinglePass(connection, accepted_at);
  if (slot != nullptr) {
    Release(slot);
  } else {
    outputs_->TakeBack(connection);
  }
}

void WorkerCore::Evict(void* owner) { Close(static_cast<Slot*>(owner), Waited::kYes); }

void WorkerCore::TrimIdleTransports() {
  // free_ is a stack: the slots at its bottom have waited longest and are reused last. A
  // wave of TLS connections leaves each of its slots an SSL object with its buffers (~43 KB,
  // kept so that the next connection skips SSL_new): those beyond the kKeptIdleTransports
  // most recently freed go back (3,000 stalled handshakes left 206 MB; this returns 125 MB).
  if (trimmed_free_ > free_.size()) trimmed_free_ = free_.size();
  if (free_.size() <= kKeptIdleTransports) return;
  const size_t target = free_.size() - kKeptIdleTransports;
  if (target <= trimmed_free_) return;
  for (size_t i = trimmed_free_; i < target; ++i) free_[i]->connection.ReleaseTransport();
  // Freed is not returned: glibc keeps the pages in the arena until trimmed. After a wave
  // (rare: hundreds of slots at once), so the cost of a trim (~ms) is paid once per wave.
  if (target - trimmed_free_ >= kTrimAfterReleased) malloc_trim(0);
  trimmed_free_ = target;
}

void WorkerCore::ReleaseIdleTransports() {
  for (Slot* slot : free_) slot->connection.ReleaseTransport();
}

void WorkerCore::DecideKeepOpen(Connection& connection, const Role& role) {
  if (role.keepalive <= absl::ZeroDuration()) return;  // the single pass
  if (role.learner != nullptr && !role.learner->KeepOpen(connection.peer())) {
    WorkerStats::Add(stats_.keepalive_skipped);
    return;
  }
  connection.set_keepalive(role.keepalive);
}

void WorkerCore::LearnReuse(const Connection& connection) {
  ReuseLearner* learner = RoleOf(connection.listener()).learner;
  if (learner == nullptr || !connection.keep_open() || !connection.served()) return;
  learner->Learn(connection.peer(), connection.requests());
}

void WorkerCore::FinishSinglePass(Connection& connection, int64_t accepted_at) {
  WorkerStats::Add(stats_.single_pass);
  LearnReuse(connection);
  if (!connection.close_queued()) driver_->CloseSocket(connection.fd(), /*abort=*/false);
  metrics_.RecordClose(accepted_at, MonotonicNanos());
  MaybeStop();
}

void WorkerCore::Admit(Connection& connection, Slot* received, int64_t accepted_at) {
  // Kept open only for a next request, with every answer sent: refusing it costs the client
  // nothing it asked for (RFC 7766 §6.2.3: idle connections go first under load).
  const bool idle = connection.idle();
  // A connection left with part of a response keeps the output buffer it was lent, so the
  // pool readies another before the next single pass.
  const bool keeps_output = connection.state() == ConnectionState::kWriting;
  const bool output_ok = !keeps_output || outputs_->CanKeepOne();
  Slot* slot = received;
  // A full pool makes room from the plain connection that has waited longest for its request
  // (an idle one first in effect: idle ones wait longest): clients that stall cannot keep the
  // newcomer out. Only what waits to read is taken, never an answer being written.
  if (static_cast<int>(parked_.size()) >= max_connections_ && output_ok) EvictOldestReadWait();
  if (static_cast<int>(parked_.size()) >= max_connections_ || !output_ok) {
    slot = nullptr;
  } else if (slot == nullptr) {
    slot = AcquireSlot();
  }
  std::atomic<uint64_t>* refused = nullptr;
  if (slot == nullptr) {
    refused = &stats_.rejected_pool_full;
  } else if (!connection.transport().MayWait()) {
    // Its transport's admission says no (a TLS ClientHello in pieces whose prefix holds its
    // share of the handshakes: retry later).
    refused = &stats_.rejected_tls_handshakes;
  } else if (!slot->peer_counted && !CountPeer(connection.peer(), slot)) {
    // The client: the accepted peer, or the one a trusted PROXY header named (a transport's
    // connection without PROXY was counted at accept, before any work: Open).
    refused = &stats_.rejected_per_client;
  }
  if (refused != nullptr) {
    Refuse(connection, idle, *refused, accepted_at);
    if (received != nullptr) {
      Release(received);
    } else {
      if (slot != nullptr) free_.push_back(slot);
      outputs_->TakeBack(connection);
    }
    return;
  }
  if (received == nullptr) slot->connection.TakeOver(connection);
  if (keeps_output) {
    outputs_->Replenish();  // cannot fail: checked above
  } else {
    outputs_->TakeBack(slot->connection);
  }
  WorkerStats::Add(stats_.parked);
  slot->accepted_at = accepted_at;
  slot->phase = Slot::Phase::kParked;
  slot->parked_index = parked_.size();
  parked_.push_back(slot);
  metrics_.SetParked(parked_.size());
  Park(slot);
}

void WorkerCore::Refuse(Connection& connection, bool idle, std::atomic<uint64_t>& cause,
                        int64_t accepted_at) {
  WorkerStats::Add(idle ? stats_.idle_closes : cause);
  if (!connection.close_queued()) {
    driver_->CloseSocket(connection.fd(), MustAbort(connection, Waited::kNo));
  }
  metrics_.RecordClose(accepted_at, MonotonicNanos());  // every connection ends in the histogram
}

WorkerCore::Slot* WorkerCore::AcquireSlot() {
  if (!free_.empty()) {
    Slot* slot = free_.back();
    free_.pop_back();
    return slot;
  }
  if (static_cast<int>(pool_.size()) >= max_connections_ + driver_->receives_in_flight()) {
    return nullptr;
  }
  // Grows the pool: allocation happens only until the pool has seen its peak.
  pool_.push_back(std::make_unique<Slot>(this, input_buffer_bytes_));
  return pool_.back().get();
}

bool WorkerCore::CountPeer(const std::array<uint8_t, 16>& peer, Slot* slot) {
  // Only a connection that parks pays for this (a shard's lock): the single pass never gets
  // here. A secure listener's connections may count in a table of their own
  // (--tls-max-connections-per-client).
  ClientTable* table = RoleOf(slot->connection.listener()).clients;
  const ClientKey key = ClientKeyOf(peer, config_.client_prefix_v4, config_.client_prefix_v6);
  if (!table->TryAcquire(key)) return false;
  slot->client_key = key;
  slot->peer_counted = true;
  slot->counted_in = table;
  return true;
}

void WorkerCore::UncountPeer(Slot* slot) {
  if (!slot->peer_counted) return;
  slot->peer_counted = false;
  slot->counted_in->Release(slot->client_key);
}

// --- parked connections

void WorkerCore::TrackReadWait(Slot* slot) {
  const ConnectionState state = slot->connection.state();
  read_room_.Remove(slot->read_wait);
  if (slot->phase != Slot::Phase::kParked) return;
  if (RoleOf(slot->connection.listener()).transports != nullptr) return;  // its own admission
  if (state != ConnectionState::kReading && state != ConnectionState::kProxyHeader) return;
  slot->read_wait.owner = slot;
  read_room_.Add(slot->read_wait, ClientKey{});  // the newest: it waits from now
}

bool WorkerCore::EvictOldestReadWait() {
  WaitingRoom::Entry* oldest = read_room_.Oldest(nullptr);
  if (oldest == nullptr) return false;
  Slot* slot = static_cast<Slot*>(oldest->owner);
  WorkerStats::Add(slot->connection.idle() ? stats_.idle_closes : stats_.evicted_waiting);
  if (slot->connection.idle()) slot->connection.SayClosing(env_);
  Close(slot, Waited::kYes);
  return true;
}

void WorkerCore::Park(Slot* slot) {
  Connection& connection = slot->connection;
  const ConnectionState state = connection.state();
  connection.transport().Parked();
  TrackUpstream(slot);
  const SteadyTime now = clock_.steady();
  if (state == ConnectionState::kWaitingUpstream) {
    // The handler delivers each answer (or its SERVFAIL) by its deadline; the deadline here is
    // a backstop for answers that can no longer come (a reload's new handler). Meanwhile the
    // client's next queries are read and forwarded at once (a stub multiplexing its users,
    // RFC 7766 §6.2.1.1), up to Connection::kMaxUpstreamPending in flight.
    if (connection.reads_while_waiting()) {
      slot->watch.Arm(connection.fd(), Interest::kReadable);
    } else {
      slot->watch.Disarm();
    }
    slot->deadline.ArmAt(After(now, kUpstreamBackstop));
    return;
  }
  if (draining_ && connection.idle()) {
    Close(slot);  // between requests: nothing in flight to finish
    return;
  }
  TrackReadWait(slot);
  // An idle DoT connection keeps only what its next record needs (issue 24: memory per
  // connection bounded while idle).
  if (connection.idle()) connection.ReleaseIdleBuffers();
  const bool to_write =
      state == ConnectionState::kWriting || state == ConnectionState::kClosingUnsent;
  ParkedConnection parked;
  parked.state = state;
  parked.idle = connection.idle();
  // Taken only by a wait to read: a request consumed before a partial write restarts the read
  // deadline when the connection next waits to read.
  parked.message_consumed = state == ConnectionState::kReading && connection.TakeMessageConsumed();
  parked.input_pending = !connection.in().empty();
  parked.deadlines = connection.deadlines();
  parked.keepalive = RoleOf(connection.listener()).keepalive;
  const WorkerLoad load{.parked = parked_.size(), .max_connections = max_connections_};
  const ParkDeadline deadline = ComputeParkDeadline(parked, now, config_, load);
  connection.deadlines() = deadline.deadlines;
  slot->deadline.ArmAt(deadline.at);
  slot->watch.Arm(connection.fd(), to_write ? Interest::kWritable : Interest::kReadable);
}

void WorkerCore::OnReady(Slot* slot) {
  slot->deadline.Cancel();
  Connection& connection = slot->connection;
  outputs_->Lend(connection);
  const ConnectionState state = connection.Advance(env_);
  FlushUpstream();
  AfterAdvance(slot, state);
}

void WorkerCore::OnDeadline(Slot* slot) {
  CountTimeout(slot->connection);
  LearnReuse(slot->connection);
  if (slot->connection.idle()) slot->connection.SayClosing(env_);
  Close(slot, Waited::kYes);
}

void WorkerCore::AfterAdvance(Slot* slot, ConnectionState state) {
  if (state == ConnectionState::kClosed) {
    LearnReuse(slot->connection);
    Close(slot);
    return;
  }
  if (state != ConnectionState::kWriting) {
    outputs_->TakeBack(slot->connection);
  } else if (!outputs_->Replenish()) {
    // Every output buffer is held by a connection waiting to write: this one cannot keep its
    // own without leaving the single pass without one.
    WorkerStats::Add(stats_.rejected_pool_full);
    Close(slot);
    return;
  }
  Park(slot);
}

void WorkerCore::CountTimeout(Connection& connection) {
  connection.transport().TimedOut();
  const std::optional<SteadyTime>& lifetime = connection.deadlines().lifetime;
  if (lifetime.has_value() && *lifetime <= clock_.steady()) {
    WorkerStats::Add(stats_.lifetime_cuts);
    return;
  }
  switch (connection.state()) {
    case ConnectionState::kProxyHeader:
      WorkerStats::Add(stats_.read_timeouts);
      if (connection.unused()) WorkerStats::Add(stats_.closed_unused);
      break;
    case ConnectionState::kReading:
      if (connection.deadlines().read_is_idle) {
        // RFC 7766 §6.2.3: the server may close an idle connection; no request was cut.
        WorkerStats::Add(stats_.idle_closes);
      } else {
        WorkerStats::Add(stats_.read_timeouts);
        if (connection.unused()) WorkerStats::Add(stats_.closed_unused);
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

void WorkerCore::Close(Slot* slot, Waited waited) {
  Connection& connection = slot->connection;
  slot->watch.Disarm();
  slot->deadline.Cancel();
  if (!connection.close_queued()) {
    driver_->CloseSocket(connection.fd(), MustAbort(connection, waited));
  }
  if (slot->phase == Slot::Phase::kParked) {
    Slot* last = parked_.back();
    parked_[slot->parked_index] = last;
    last->parked_index = slot->parked_index;
    parked_.pop_back();
    metrics_.SetParked(parked_.size());
  }
  metrics_.RecordClose(slot->accepted_at, MonotonicNanos());
  Release(slot);
  MaybeStop();
}

bool WorkerCore::MustAbort(const Connection& connection, Waited waited) {
  // Answer bytes the client has not taken must not stay with the kernel for an orphan
  // (socket_options.h): abort (RST) rather than close. Either the connection still holds them
  // (a timeout, the lifetime cap, the drain deadline while writing), or the kernel does: a
  // client that pipelined its queries and never read, whose connection then ends idle or by
  // a limit, has its answers unsent in the send queue (one ioctl, off the single pass).
  const ConnectionState state = connection.state();
  if (state == ConnectionState::kWriting || state == ConnectionState::kClosingUnsent) return true;
  // Only a close that ends a wait (an idle or drain deadline) asks the kernel: the client had
  // its time to read. Bytes sent in this very turn are still on their way out (a client that
  // half-closed after pipelining 200 queries reads their answers as the kernel sends them):
  // an abort would drop answers it is about to read. Those closes are the connection's own,
  // after its answers (Connection::CloseAfterWrite waits for the kernel when it holds more
  // than kUnsentCheckBytes).
  if (waited == Waited::kNo || connection.bytes_sent() == 0) return false;
  if (env_.io->UnsentBytes(connection.fd()) == 0) return false;
  WorkerStats::Add(stats_.unsent_aborts);
  return true;
}

void WorkerCore::Release(Slot* slot) {
  slot->connection.transport().Ended();
  read_room_.Remove(slot->read_wait);
  if (!waiting_upstream_.empty()) waiting_upstream_.erase(slot->connection.id());
  outputs_->TakeBack(slot->connection);
  UncountPeer(slot);
  slot->connection.Reset(-1);
  // A connection that began under a replaced configuration (a reload's new certificate) lets
  // go of its library objects as it ends: the old key goes with the last of them.
  slot->connection.ReleaseTransportIfStale();
  slot->phase = Slot::Phase::kFree;
  free_.push_back(slot);
}

// --- accepting and draining

AcceptNext WorkerCore::OnAcceptError(int error) {
  switch (error) {
    case EAGAIN:
#if EAGAIN != EWOULDBLOCK
    case EWOULDBLOCK:
#endif
      return AcceptNext::kDone;
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
      return AcceptNext::kAcceptMore;
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM:
      PauseAccepting(error);
      return AcceptNext::kPaused;
    default:
      // Unexpected and possibly lasting: pausing is what keeps it from spinning.
      WorkerStats::Add(stats_.accept_errors);
      PauseAccepting(error);
      return AcceptNext::kPaused;
  }
}

void WorkerCore::PauseAccepting(int error) {
  if (paused_) return;
  WorkerStats::Add(stats_.accept_pauses);
  metrics_.CountAcceptPause(error);
  // Spinning on a listener that stays readable would burn the CPU: stop watching it for a
  // while (docs/design.md "Limits, and why": nginx, NSD). One log line per pause.
  static LogRateLimit limit("accept paused");  // an attack can make this repeat every second
  LogWarningLimited(limit,
                    "worker %d: accept: %s; not accepting for %s (raise the descriptor limit, "
                    "ulimit -n, or lower --max-connections)",
                    index_, std::strerror(error), absl::FormatDuration(config_.accept_pause));
  driver_->SetAccepting(false);
  paused_ = true;
  resume_timer_.ArmAt(After(clock_.steady(), config_.accept_pause));
}

void WorkerCore::BeginDrain() {
  if (draining_) return;
  draining_ = true;
  resume_timer_.Cancel();
  drain_timer_.ArmAt(After(clock_.steady(), config_.drain_timeout));
  driver_->SetAccepting(false);
  // Closing a reuseport listener resets the connections still in its accept queue: the driver
  // takes them first (bounded by the backlog), then closes. New SYNs go to the group's other
  // sockets until those close too; zero loss needs net.ipv4.tcp_migrate_req
  // (docs/design.md "Reloads and restarts").
  driver_->CloseListeners(/*take_queued=*/!paused_);
  // Kept-alive connections between requests have nothing in flight: close them now.
  for (size_t i = parked_.size(); i > 0; --i) {
    Connection& connection = parked_[i - 1]->connection;
    if (!connection.idle()) continue;
    connection.SayClosing(env_);
    Close(parked_[i - 1], Waited::kYes);
  }
  MaybeStop();
}

void WorkerCore::OnListenersClosed() {
  listeners_closed_ = true;
  MaybeStop();
}

void WorkerCore::MaybeStop() {
  // Done draining once the listeners are closed (nothing new can come) and no connection is
  // left, parked or in its first recv, nor held elsewhere in the worker (SetDrainHold).
  if (!draining_ || stopped_ || !listeners_closed_ || !parked_.empty() || receiving_ > 0) return;
  if (drain_hold_ && drain_hold_()) return;  // RecheckDrain() comes when it lets go
  stopped_ = true;
  drain_timer_.Cancel();
  driver_->Stop();
}

void WorkerCore::OnDrainDeadline() {
  while (!parked_.empty()) {
    WorkerStats::Add(stats_.closed_drain);
    Close(parked_.back(), Waited::kYes);
  }
  if (!stopped_) {
    stopped_ = true;
    driver_->Stop();
  }
}

// --- upstreams

void WorkerCore::AttachForwarder(Forwarder* forwarder) {
  forwarder_ = forwarder;
  env_.upstream = &forwarder->queue();
}

void WorkerCore::TrackUpstream(Slot* slot) {
  const Connection& connection = slot->connection;
  if (connection.upstream_pending() > 0) {
    waiting_upstream_[connection.id()] = slot;
  } else if (!waiting_upstream_.empty()) {
    waiting_upstream_.erase(connection.id());
  }
}

void WorkerCore::DeliverUpstream(const UpstreamAnswer& answer, absl::Span<const uint8_t> bytes) {
  const auto it = waiting_upstream_.find(answer.connection);
  if (it == waiting_upstream_.end()) {
    WorkerStats::Add(stats_.upstream_orphans);  // closed meanwhile (or a handler bug)
    return;
  }
  Slot* slot = it->second;
  Connection& connection = slot->connection;
  if (slot->watch.armed() && connection.state() == ConnectionState::kWriting) {
    // Parked to write an earlier answer, which holds the output: this one goes after it, when
    // the socket is writable again (OnReady).
    if (!connection.has_output() || !connection.DeliverUpstream(bytes)) {
      WorkerStats::Add(stats_.write_timeouts);  // the client does not read its answers
      Close(slot);
    }
    return;
  }
  slot->deadline.Cancel();
  // Its read watch while waiting (if any) stays until Park or Close, below in this call,
  // decide what the next state needs: on the libevent driver the same read watch again costs
  // no epoll_ctl, where a disarm here cost a DEL and the park an ADD per forwarded query.
  outputs_->Lend(connection);
  if (!connection.DeliverUpstream(bytes)) {
    // Its output is full of answers the client does not read: it cannot take this one.
    WorkerStats::Add(stats_.write_timeouts);
    Close(slot);
    return;
  }
  const ConnectionState state = connection.Advance(env_);
  FlushUpstream();
  AfterAdvance(slot, state);
}

}  // namespace onepass
