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
// driver, and Connection does its socket calls through SocketIo.
//
// Thread-confined to its worker's thread, except the read-only accessors noted.
#ifndef ONEPASS_SERVER_CORE_WORKER_CORE_H_
#define ONEPASS_SERVER_CORE_WORKER_CORE_H_

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/handler.h"
#include "server/core/client_limits.h"
#include "server/core/connection.h"
#include "server/core/connection_tls.h"
#include "server/core/handshake_limiter.h"
#include "server/core/io_driver.h"
#include "server/core/proxy_protocol.h"
#include "server/core/reuse_learner.h"
#include "server/core/stats.h"
#include "server/core/timer_queue.h"
#include "server/core/waiting_room.h"
#include "server/core/worker_metrics.h"
#include "server/server_config.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_stats.h"
#include "server/upstream/upstream_channel.h"

namespace onepass {

class WorkerCore final : public ConnectionSink, public HandshakeSpace {
 public:
  // A connection that waits for upstream answers longer than this is closed: the handler
  // answers every request by its own deadline, so only a lost in-flight table (a reload) gets
  // here.
  static constexpr absl::Duration kUpstreamBackstop = absl::Seconds(60);

  // `driver` runs this core (set_sink is called here); `clients` is the server-wide per-client
  // table. Both outlive the core. `max_connections`: the most connections parked at once.
  WorkerCore(int index, const ServerConfig& config, const ProxyPolicy& proxy_policy,
             int max_connections, ClientTable* clients,
             std::shared_ptr<const HandlerFactory> factory, IoDriver* driver,
             ClientTable* tls_clients = nullptr);
  ~WorkerCore() override;
  WorkerCore(const WorkerCore&) = delete;
  WorkerCore& operator=(const WorkerCore&) = delete;

  // On the constructing thread: the handler, the upstreams (a wrong backend address fails
  // here), the timers; starts accepting.
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
  // Between two events: every connection's next call sees `handler` (made by `factory`), which
  // takes over the old one's in-flight upstream state. The old handler is destroyed here.
  void SwapHandler(std::shared_ptr<const HandlerFactory> factory, std::unique_ptr<Handler> handler);
  // Between two events: connections accepted on the TLS listeners from now on start under
  // `context` (a SIGHUP's new certificate, key or ticket keys); those in flight keep theirs.
  void SwapTls(std::shared_ptr<const tls::TlsServerContext> context);

  // ConnectionSink.
  void ServeAccepted(int fd, const sockaddr_storage& peer, int listener) override;
  Receive BeginReceive(int fd, const sockaddr_storage& peer, int listener) override;
  void Received(void* connection, ssize_t result) override;
  void OnFinalSendFailed(int error) override { WorkerStats::Add(stats_.reset_errors); }
  AcceptNext OnAcceptError(int error) override;
  void OnListenersClosed() override;

  size_t input_buffer_bytes() const { return input_buffer_bytes_; }
  size_t output_buffer_bytes() const { return output_buffer_bytes_; }
  size_t parked() const { return parked_.size(); }
  bool draining() const { return draining_; }
  // Any thread.
  StatsSnapshot ReadStats() const { return stats_.Read(); }
  HandlerCounters& handler_counters() { return handler_counters_; }
  const HandlerCounters& handler_counters() const { return handler_counters_; }
  const WorkerMetrics& metrics() const { return metrics_; }
  // Any thread: handshakes and failures on this worker's TLS listeners.
  const tls::TlsStats& tls_stats() const { return tls_stats_; }
  // Whether the handler forwards (its upstream sockets keep the shared descriptor table).
  bool forwarding() const { return upstream_ != nullptr; }

  // For tests of the core: the socket calls of every connection (SocketIo), and the clock
  // deadlines are computed from (the driver fires the TimerQueue on the same one).
  void set_socket_io(SocketIo* io) { env_.io = io; }
  void set_clock(SteadyTime (*now)()) { now_ = now; }

 private:
  // A pooled connection and what the core keeps beside it.
  struct Slot {
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
    WaitingRoom::Entry handshake;       // in handshake_room_ while parked mid-handshake
    WaitingRoom::Entry read_wait;       // in read_room_ while a plain connection waits to read
    int64_t accepted_at = 0;            // MonotonicNanos() at accept (server/core/worker_metrics.h)
  };

  // A connection accepted on `listener`: its TLS session is started when that is a TLS
  // listener. False: it could not be, and the connection is closed (counted).
  bool StartTls(Connection& connection, int listener);
  // --allow-from at accept (not behind a PROXY balancer): true when `peer` is refused, its
  // socket closed and counted (rejected_acl).
  bool RefusedByAcl(int fd, const sockaddr_storage& peer, int64_t accepted_at);
  // A connection accepted on a TLS listener: served in a slot from the start (it always waits
  // for its client), its client counted before any TLS work.
  void ServeTlsAccepted(int fd, const sockaddr_storage& peer, int listener, int64_t accepted_at);
  // Counts `slot`'s TLS client (unless a PROXY header is still to name it). False: refused
  // (rejected_per_client), closed and released.
  bool AdmitTlsClient(Slot* slot, int64_t accepted_at);
  // The connection was served whole on its first turn.
  void FinishSinglePass(Connection& connection, int64_t accepted_at);
  // After Reset of a connection accepted on `listener`: whether its client gets keepalive
  // (server/core/reuse_learner.h).
  void DecideKeepOpen(Connection& connection, int listener);
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
  // Keeps handshake_room_ right as `slot`'s connection finishes its TLS handshake or goes.
  void CountHandshake(Slot* slot, bool handshaking);
  // On the heartbeat: free slots beyond the kKeptIdleTls most recent give back their SSL
  // objects and buffers (a wave of TLS connections leaves ~43 KB in each).
  void TrimIdleTls();
  // Keeps read_room_ right as `slot` parks (a plain connection waiting to read joins it, the
  // newest) or goes.
  void TrackReadWait(Slot* slot);
  // Closes the plain connection that has waited longest to read (counted: evicted_waiting, or
  // idle_closes for one between requests); false when none waits.
  bool EvictOldestReadWait();
  // Interface HandshakeSpace: a ClientHello (of the connection being advanced, or of the
  // scratch) asks for a handshake slot.
  bool MakeRoomFor(const ClientKey& client) override;
  ClientKey TlsClientOf(const Connection& connection) const;
  // While the handshake room is full (not counting `self`): closes the handshake that has
  // waited longest (counted: tls failures "evicted").
  void EvictOldestHandshakes(const WaitingRoom::Entry* self);
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
  // Lends `connection` the scratch's output buffer for a turn.
  void Lend(Connection& connection);
  Slot* AcquireSlot();
  // Counts `peer` against --max-connections-per-client into `slot`; false when that client has
  // its share parked already, on any worker.
  bool CountPeer(const std::array<uint8_t, 16>& peer, Slot* slot);
  void UncountPeer(Slot* slot);
  bool RefillScratchOutput();
  void ReleaseOutput(Connection& connection);
  void CountTimeout(const Connection& connection);
  void PauseAccepting(int error);
  void MaybeStop();
  void OnDrainDeadline();

  // Forwarding handlers (HandlerFactory::Forwarding).
  void OnUpstreamDatagram(int index, absl::Span<const uint8_t> datagram);
  void OnUpstreamStreamFrame(int index, absl::Span<const uint8_t> frame);
  void OnUpstreamTick();
  void DeliverUpstream(const UpstreamAnswer& answer);
  void FlushUpstream() {
    if (upstream_ != nullptr && !upstream_queue_->empty()) upstream_->Send(*upstream_queue_);
  }
  void TrackUpstream(Slot* slot);

  const int index_;
  const ServerConfig config_;
  const ProxyPolicy proxy_policy_;
  const int max_connections_;
  ClientTable* const clients_;
  // TLS listeners' clients (--tls-max-connections-per-client); null: counted in clients_.
  ClientTable* const tls_clients_;
  // Which clients reuse connections; consulted only with --keepalive-ms and --keepalive-learn.
  ReuseLearner reuse_;
  bool learn_reuse_ = false;
  // The same for TLS listeners' clients (null: no --tls-idle-timeout-ms, or no learning).
  std::unique_ptr<ReuseLearner> tls_reuse_;
  IoDriver* const driver_;
  const size_t input_buffer_bytes_;
  const size_t output_buffer_bytes_;
  // Plain connections parked waiting to read, oldest first (a full pool makes room from it).
  WaitingRoom read_room_;
  // Listeners from this index on are --tls-listen's (they follow --listen's in the driver);
  // INT_MAX without any.
  const int first_tls_listener_;
  // Declared before the handlers, which count into it: it outlives them.
  HandlerCounters handler_counters_;
  // Declared before handler_ so that the handler goes first: it may read the factory's data.
  std::shared_ptr<const HandlerFactory> factory_;
  std::unique_ptr<Handler> handler_;
  AllowList allow_;  // --allow-from
  ConnectionEnv env_;
  WorkerStats stats_;
  tls::TlsStats tls_stats_;
  TlsStart tls_start_;  // the context new TLS connections start with
  // This worker's share of the TLS handshake limits (ServerConfig::tls_*).
  std::unique_ptr<HandshakeLimiter> handshake_limiter_;
  // Handshakes parked for their clients (--tls-max-handshakes, --tls-handshakes-per-client:
  // this worker's share); null without TLS listeners.
  std::unique_ptr<WaitingRoom> handshake_room_;
  // The parked connection whose turn runs now (OnReady), so that the room it may ask for is not
  // made from itself; null for the single pass.
  Slot* advancing_ = nullptr;
  WorkerMetrics metrics_;

  // The single pass runs here; parking swaps its buffers into a pooled slot.
  std::unique_ptr<Connection> scratch_;
  // Grows on demand up to max_connections_ + the driver's receives in flight, never shrinks.
  std::vector<std::unique_ptr<Slot>> pool_;
  std::vector<Slot*> free_;
  // Free slots that keep their TLS layer's SSL object (the most recently freed), and how many
  // at the bottom of free_ have let go of theirs (TrimIdleTls).
  static constexpr size_t kKeptIdleTls = 256;
  static constexpr size_t kTrimAfterReleased = 512;
  size_t trimmed_free_ = 0;
  std::vector<Slot*> parked_;
  int receiving_ = 0;  // slots between BeginReceive and Received
  // Output buffers not in use; with those held by the scratch and by parked connections that
  // wait to write, never more than max_connections_ + 1 (output_buffers_).
  std::vector<std::unique_ptr<OutputBuffer>> spare_outputs_;
  int output_buffers_ = 0;
  uint64_t next_connection_id_ = 1;
  SteadyTime (*now_)() = &std::chrono::steady_clock::now;

  // Forwarding (server/upstream/upstream_channel.h); all null/empty when the handler answers
  // itself.
  std::unique_ptr<UpstreamChannel> upstream_;
  std::unique_ptr<UpstreamQueue> upstream_queue_;  // 1 MiB: only when forwarding
  // The answer the handler renders for one upstream reply or expiry, then copied to the
  // connection's output.
  std::unique_ptr<OutputBuffer> upstream_answer_;
  // Connections with answers still to come from upstream, by Connection::id().
  absl::flat_hash_map<uint64_t, Slot*> waiting_upstream_;

  absl::Duration tick_period_;  // ForwardingSpec::tick_period
  Timer resume_timer_;          // accepting again after a pause
  Timer drain_timer_;
  Timer upstream_tick_;
  Timer heartbeat_;
  bool paused_ = false;
  bool draining_ = false;
  bool listeners_closed_ = false;
  bool stopped_ = false;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_WORKER_CORE_H_
