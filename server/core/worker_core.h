// One worker's connection lifecycle, written once for every I/O driver
// (server/core/io_driver.h; docs/design.md "The connection path"):
//   - the single pass: a socket fresh from accept runs Connection::Advance at once (recv,
//     handler, one send, close) on the scratch connection, with no allocation;
//   - admission: a connection that must wait is parked only while the worker has fewer than
//     --max-connections parked, its client fewer than --max-connections-per-client (server-wide)
//     and an output buffer can be lent; otherwise it is closed, aborted when it holds answer
//     bytes the client has not taken (the orphan bound of docs/design.md);
//   - the connection table: a pool of slots that grows to its peak and never shrinks, the
//     parked set, and the index of connections waiting on upstream answers by id;
//   - the park: what the state waits for (readable, writable, or no socket event while waiting
//     on upstreams) and its deadline (server/core/deadline.h) on the worker's TimerQueue;
//   - close, the accept-error policy (pause on EMFILE & co.), the drain, upstream delivery
//     (server/upstream/upstream_channel.h) and the handler swap on reload.
// It decides; it performs no I/O of its own: sockets are watched, accepted and closed by the
// driver, and Connection does its socket calls through SocketIo. It knows no TLS: a listener's
// connections may go through a Transport of a factory given to it (server/transport/), whose
// admission (the TLS handshake room) it drives through Transport's lifecycle calls.
//
// Thread-confined to its worker's thread, except the read-only accessors noted.
#ifndef ONEPASS_SERVER_CORE_WORKER_CORE_H_
#define ONEPASS_SERVER_CORE_WORKER_CORE_H_

#include <sys/socket.h>

#include <array>
#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/handler.h"
#include "server/core/allow_list.h"
#include "server/core/client_limits.h"
#include "server/core/clock.h"
#include "server/core/connection.h"
#include "server/core/core_config.h"
#include "server/core/forwarder.h"
#include "server/core/io_driver.h"
#include "server/core/output_pool.h"
#include "server/core/proxy_protocol.h"
#include "server/core/reuse_learner.h"
#include "server/core/stats.h"
#include "server/core/timer_queue.h"
#include "server/core/waiting_room.h"
#include "server/core/worker_metrics.h"
#include "server/transport/transport.h"

namespace onepass {

// The listeners from `first` on (--tls-listen's, after --listen's) and how their connections
// are served: through `transports`' transports, with their own keepalive and per-client table.
struct SecureListeners {
  int first = INT_MAX;  // none
  TransportFactory* transports = nullptr;
  absl::Duration keepalive = absl::ZeroDuration();  // --tls-idle-timeout-ms
  ClientTable* clients = nullptr;                   // null: counted with the plain listeners'
};

class WorkerCore final : public ConnectionSink, public TransportHost, public AnswerSink {
 public:
  // A connection that waits for upstream answers longer than this is closed: the handler
  // answers every request by its own deadline, so only a lost in-flight table (a reload) gets
  // here.
  static constexpr absl::Duration kUpstreamBackstop = absl::Seconds(60);

  // `driver` runs this core (set_sink is called here); `clients` is the server-wide per-client
  // table. Both outlive the core. `max_connections`: the most connections parked at once.
  WorkerCore(int index, const CoreConfig& config, const ProxyPolicy& proxy_policy,
             int max_connections, ClientTable* clients,
             std::shared_ptr<const HandlerFactory> factory, IoDriver* driver,
             const SecureListeners& secure = {});
  ~WorkerCore() override;
  WorkerCore(const WorkerCore&) = delete;
  WorkerCore& operator=(const WorkerCore&) = delete;

  // Before Init, when the handler forwards: its upstreams (server/upstream/upstream_dispatch.h,
  // made over this core's driver, handler, stats and clock), which outlive the core.
  void AttachForwarder(Forwarder* forwarder);
  // On the constructing thread: the handler, the timers; starts accepting.
  absl::Status Init();
  // On the worker's thread once pinned, before the driver runs: the hot path's buffers are
  // first touched (placed, on a NUMA machine) there.
  void StartOnThread();
  // On the worker's thread, after the driver's Run: closes the connections a drain cut short
  // (aborted), so that no socket of this thread's descriptor table is closed from another.
  void EndOnThread();

  // Stop accepting, finish connections in flight within config.drain_timeout, then stop the
  // driver.
  void BeginDrain();
  // What else of this worker a drain waits for, besides its connections: `holds` is true while
  // it has connections of its own (the worker's AF_XDP queues), and RecheckDrain() is called
  // when it has none left. The drain's deadline ends it all the same.
  void SetDrainHold(std::function<bool()> holds) { drain_hold_ = std::move(holds); }
  void RecheckDrain() { MaybeStop(); }
  // Between two events: every connection's next call sees `handler` (made by `factory`), which
  // takes over the old one's in-flight upstream state. The old handler is destroyed here.
  void SwapHandler(std::shared_ptr<const HandlerFactory> factory, std::unique_ptr<Handler> handler);
  // Between two events, after the secure listeners' factory changed its configuration (a
  // SIGHUP's new certificate): idle slots let go of their transports' library objects now,
  // rather than at their next connection; connections in flight keep theirs.
  void ReleaseIdleTransports();

  // ConnectionSink.
  void ServeAccepted(int fd, const sockaddr_storage& peer, int listener) override;
  Receive BeginReceive(int fd, const sockaddr_storage& peer, int listener) override;
  void Received(ReceiveHandle* handle, ssize_t result) override;
  void OnFinalSendFailed(int error) override { WorkerStats::Add(stats_.reset_errors); }
  AcceptNext OnAcceptError(int error) override;
  void OnListenersClosed() override;

  size_t input_buffer_bytes() const { return input_buffer_bytes_; }
  size_t output_buffer_bytes() const { return output_buffer_bytes_; }
  // TransportHost: closes the parked connection of slot `owner`, evicted by its transport's
  // admission.
  void Evict(void* owner) override;
  size_t parked() const { return parked_.size(); }
  bool draining() const { return draining_; }
  // Any thread.
  StatsSnapshot ReadStats() const { return stats_.Read(); }
  HandlerCounters& handler_counters() { return handler_counters_; }
  const HandlerCounters& handler_counters() const { return handler_counters_; }
  const WorkerMetrics& metrics() const { return metrics_; }
  // For the forwarder (AttachForwarder): the handler in use and the worker's counters.
  Handler& handler() { return *handler_; }
  const HandlerFactory& factory() const { return *factory_; }
  WorkerStats* stats() { return &stats_; }
  const Clock* clock() const { return &clock_; }
  // AnswerSink: an upstream answer for one of this core's connections.
  void DeliverUpstream(const UpstreamAnswer& answer, absl::Span<const uint8_t> bytes) override;

  // For tests of the core: the socket calls of every connection (SocketIo), and the clocks:
  // deadlines are computed from the steady one (the driver fires the TimerQueue on the same
  // one), handlers and upstream expiry read the wall one.
  void set_socket_io(SocketIo* io) { env_.io = io; }
  void set_clock(const Clock& clock) { clock_ = clock; }

 private:
  // A pooled connection and what the core keeps beside it.
  struct Slot final : public ReceiveHandle {
    Slot(WorkerCore* core, size_t input_bytes);
    Connection connection;
    FdWatch watch;   // the state's readiness while parked
    Timer deadline;  // the state's deadline while parked (the backstop while on upstreams)
    enum class Phase : uint8_t { kFree, kReceiving, kParked } phase = Phase::kFree;
    size_t parked_index = 0;  // in parked_
    size_t asked = 0;         // what the driver's first recv asked for (BeginReceive)
    // The client key of the peer (server/core/client_limits.h) while it counts against the
    // per-client limit.
    std::array<uint8_t, 16> client_key{};
    bool peer_counted = false;
    ClientTable* counted_in = nullptr;  // the table peer_counted counts in
    WaitingRoom::Entry read_wait;       // in read_room_ while a plain connection waits to read
    int64_t accepted_at = 0;            // MonotonicNanos() at accept (server/core/worker_metrics.h)
  };

  // How the connections of one listener are served.
  struct Role {
    TransportFactory* transports = nullptr;  // null: the connection's RawTransport
    absl::Duration keepalive = absl::ZeroDuration();
    ReuseLearner* learner = nullptr;  // null: every client kept open (with keepalive)
    ClientTable* clients = nullptr;
  };
  const Role& RoleOf(int listener) const {
    return listener >= first_secure_listener_ ? secure_ : plain_;
  }

  // --allow-from at accept (not behind a PROXY balancer): true when `peer` is refused, its
  // socket closed and counted (rejected_acl).
  bool RefusedByAcl(int fd, const sockaddr_storage& peer, int64_t accepted_at);
  // The one entry of a fresh socket, on `slot` or (null) the scratch: reset, keepalive,
  // transport, and for a transport's connection its client counted before any work for it.
  // Null: refused, closed and counted (the slot released).
  Connection* Open(int fd, const sockaddr_storage& peer, int listener, Slot* slot,
                   int64_t accepted_at);
  // After the first turn (`state`): the single pass is done, or the connection is admitted.
  void FirstTurnDone(Connection& connection, Slot* slot, ConnectionState state,
                     int64_t accepted_at);
  // The connection was served whole on its first turn.
  void FinishSinglePass(Connection& connection, int64_t accepted_at);
  // After Reset of a connection of `role`: whether its client gets keepalive
  // (server/core/reuse_learner.h).
  void DecideKeepOpen(Connection& connection, const Role& role);
  // A connection that was kept open ended by its client's doing (EOF, idle timeout, or the
  // handler's close): how many requests it carried teaches the learner.
  void LearnReuse(const Connection& connection);
  // A first turn that must wait, on `connection` (the scratch, or a slot the driver received
  // into): admitted and parked, or closed and counted.
  void Admit(Connection& connection, Slot* received, int64_t accepted_at);
  // Closes a connection refused on its first turn: counted (idle: idle_closes, else `cause`),
  // aborted when it holds answer bytes the client has not taken.
  void Refuse(Connection& connection, bool idle, std::atomic<uint64_t>& cause, int64_t accepted_at);
  void Park(Slot* slot);
  // On the heartbeat: free slots beyond the kKeptIdleTransports most recent give back their
  // transports' library objects (a wave of TLS connections leaves ~43 KB in each).
  void TrimIdleTransports();
  // Keeps read_room_ right as `slot` parks (a plain connection waiting to read joins it, the
  // newest) or goes.
  void TrackReadWait(Slot* slot);
  // Closes the plain connection that has waited longest to read (counted: evicted_waiting, or
  // idle_closes for one between requests); false when none waits.
  bool EvictOldestReadWait();
  void OnReady(Slot* slot);
  void OnDeadline(Slot* slot);
  // After a parked connection ran Advance: closes it, or parks it again for its new state.
  void AfterAdvance(Slot* slot, ConnectionState state);
  // kYes: the close ends a wait (an idle or drain deadline), not the connection's own turn.
  enum class Waited : bool { kNo, kYes };
  void Close(Slot* slot, Waited waited = Waited::kNo);
  // Whether closing `connection` must abort it: the client left answer bytes unread, in the
  // connection or in the kernel (counted: unsent_aborts).
  bool MustAbort(const Connection& connection, Waited waited);
  void Release(Slot* slot);
  Slot* AcquireSlot();
  // Counts `peer` against --max-connections-per-client into `slot`; false when that client has
  // its share parked already, on any worker.
  bool CountPeer(const std::array<uint8_t, 16>& peer, Slot* slot);
  void UncountPeer(Slot* slot);
  void CountTimeout(Connection& connection);
  void PauseAccepting(int error);
  void MaybeStop();
  void OnDrainDeadline();

  // Forwarding handlers (HandlerFactory::Forwarding): what the turn queued goes upstream.
  void FlushUpstream() {
    if (forwarder_ != nullptr) forwarder_->Flush();
  }
  void TrackUpstream(Slot* slot);

  const int index_;
  const CoreConfig config_;
  const ProxyPolicy proxy_policy_;
  const int max_connections_;
  // Which clients reuse connections, per role; consulted only with keepalive and
  // --keepalive-learn. A stub that keeps its DoT connection says nothing of how the same
  // address uses plain TCP.
  ReuseLearner plain_reuse_;
  ReuseLearner secure_reuse_;
  Role plain_;
  Role secure_;
  // Listeners from this index on are the secure ones (SecureListeners::first).
  const int first_secure_listener_;
  IoDriver* const driver_;
  const size_t input_buffer_bytes_;
  const size_t output_buffer_bytes_;
  // Plain connections parked waiting to read, oldest first (a full pool makes room from it).
  WaitingRoom read_room_;
  // Declared before the handlers, which count into it: it outlives them.
  HandlerCounters handler_counters_;
  // Declared before handler_ so that the handler goes first: it may read the factory's data.
  std::shared_ptr<const HandlerFactory> factory_;
  std::unique_ptr<Handler> handler_;
  AllowList allow_;  // --allow-from
  ConnectionEnv env_;
  WorkerStats stats_;
  WorkerMetrics metrics_;
  Clock clock_;

  // The single pass runs here; parking swaps its buffers into a pooled slot.
  std::unique_ptr<Connection> scratch_;
  // Made on the worker's thread (StartOnThread): the buffers are placed where they are used.
  std::unique_ptr<OutputPool> outputs_;
  // Grows on demand up to max_connections_ + the driver's receives in flight, never shrinks.
  std::vector<std::unique_ptr<Slot>> pool_;
  std::vector<Slot*> free_;
  // Free slots that keep their transport's library objects (the most recently freed), and how
  // many at the bottom of free_ have let go of theirs (TrimIdleTransports).
  static constexpr size_t kKeptIdleTransports = 256;
  static constexpr size_t kTrimAfterReleased = 512;
  size_t trimmed_free_ = 0;
  std::vector<Slot*> parked_;
  int receiving_ = 0;  // slots between BeginReceive and Received
  uint64_t next_connection_id_ = 1;

  // The handler's upstreams; null when it answers everything itself.
  Forwarder* forwarder_ = nullptr;
  // Connections with answers still to come from upstream, by Connection::id().
  absl::flat_hash_map<uint64_t, Slot*> waiting_upstream_;

  Timer resume_timer_;  // accepting again after a pause
  Timer drain_timer_;
  Timer heartbeat_;
  bool paused_ = false;
  bool draining_ = false;
  std::function<bool()> drain_hold_;  // SetDrainHold
  bool listeners_closed_ = false;
  bool stopped_ = false;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_WORKER_CORE_H_
