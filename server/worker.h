// One worker: a thread pinned to one CPU with its own listening sockets (one per --listen
// address), its own libevent event_base (no locks), its own Handler, buffers and counters.
// Workers share no mutable state on the single pass. What they share: the per-client table
// (server/client_limits.h: sharded mutexes, touched only when a connection parks or a parked
// one closes); counters and metrics that other threads read with relaxed loads; RequestStop
// (an eventfd write) and OfferHandler (a mailbox under a mutex taken once per reload).
//
// The path of a connection (docs/design.md "The connection path"):
//   listener readable → accept4 up to --accept-burst times → for each socket, at once: recv
//   into the scratch connection, Handler::Process, one send, close (the single pass).
// Only a connection that must wait (incomplete request, full socket buffer, keepalive, lingering
// close) takes a Connection from the worker's pool and is parked: registered with the event
// loop for its state, with a deadline (server/deadline.h).
#ifndef ONEPASS_SERVER_WORKER_H_
#define ONEPASS_SERVER_WORKER_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/handler.h"
#include "server/client_limits.h"
#include "server/connection.h"
#include "server/connection_state.h"
#include "server/scoped_fd.h"
#include "server/server_config.h"
#include "server/stats.h"
#include "server/upstream_channel.h"
#include "server/worker_metrics.h"

struct event;
struct event_base;

namespace onepass {

class UringLoop;

// Another loop that runs a worker's parked connections (the io_uring loop, server/uring_loop.h)
// and so must be handed the upstream answers for them: Worker::DeliverUpstream calls it
// instead of looking in its own waiting_upstream_.
class UpstreamDelivery {
 public:
  virtual ~UpstreamDelivery() = default;
  // `answer` (valid during the call) for the connection whose Connection::id() is
  // `connection`; counted as an orphan when no such connection waits.
  virtual void DeliverUpstream(uint64_t connection, absl::Span<const uint8_t> answer) = 0;
};

class Worker {
 public:
  // `cpu` < 0: not pinned. `listeners` are bound, listening, non-blocking sockets.
  // The worker creates its handler with `factory` (on this thread), counting into its own
  // HandlerCounters, and keeps the factory alive as long as it uses the handler.
  // `max_connections`: the most connections parked at once on this worker. `clients`: the
  // server-wide per-client counts (--max-connections-per-client), shared with the other
  // workers; it outlives the worker.
  Worker(int index, int cpu, std::vector<ScopedFd> listeners,
         std::shared_ptr<const HandlerFactory> factory, const ServerConfig& config,
         const ProxyPolicy& proxy_policy, int max_connections, ClientTable* clients);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Creates the event_base and registers the listeners. On the constructing thread.
  absl::Status Init();
  // The thread body: pins itself to its CPU and runs the event loop until it has drained.
  void Run();
  // Any thread, async-signal-safe: stop accepting, finish connections in flight within
  // config.drain_timeout, then make Run return.
  void RequestStop();
  // Any thread (SIGHUP, server/server.cc): the worker swaps in `handler` (made by `factory`)
  // between two events of its loop, so no connection sees two handlers in one call; parked
  // connections simply continue with the new one (handlers keep no per-connection state). The
  // old handler is destroyed there; the old factory is only let go (the Server keeps it until
  // every worker has switched: Server::TakeRetired). An
  // offer not yet taken is replaced by a newer one. The handler must fit this worker's
  // buffers: the factory's OutputBufferBytes() <= output_buffer_bytes(), MaxRequestBytes() <
  // input_buffer_bytes(), and count into handler_counters() (Server::Reload checks).
  void OfferHandler(std::shared_ptr<const HandlerFactory> factory, std::unique_ptr<Handler> handler,
                    uint64_t generation);

  // Any thread: the reload generation this worker serves (0: the data it started with). It
  // rises only after the worker has let go of the previous handler and factory, so data
  // replaced at generation <= it is no longer referenced by this worker (Server::TakeRetired).
  uint64_t serving_generation() const {
    return serving_generation_.load(std::memory_order_acquire);
  }
  int index() const { return index_; }
  size_t input_buffer_bytes() const { return input_buffer_bytes_; }
  size_t output_buffer_bytes() const { return output_buffer_bytes_; }
  int cpu() const { return cpu_; }
  // The listening sockets, in --listen order; valid until the worker starts draining. For
  // Server::DupListeners, before the thread starts.
  std::vector<int> listener_fds() const {
    std::vector<int> fds;
    for (const ScopedFd& listener : listeners_) fds.push_back(listener.get());
    return fds;
  }
  // Any thread.
  StatsSnapshot ReadStats() const { return stats_.Read(); }
  // The handler's counters (HandlerFactory::Counters), kept across reloads. Only handlers for
  // this worker may be given the block (CreateHandler), and only this worker's thread writes
  // it; any thread may read it.
  HandlerCounters& handler_counters() { return handler_counters_; }
  const HandlerCounters& handler_counters() const { return handler_counters_; }
  // The histogram, gauges and heartbeat for the metrics listener; any thread may Read.
  const WorkerMetrics& metrics() const { return metrics_; }

  // --private-fd-tables. Before Start: the descriptors of the other workers' listeners, which
  // this worker closes in its own table once it has one (a copy would keep a listener that its
  // worker closes at drain in the reuseport group). After Start, from any thread: whether the
  // worker's table is private yet (kPending until the thread has tried).
  enum class FdTable { kPending, kShared, kPrivate };
  void set_foreign_listeners(std::vector<int> fds) { foreign_listeners_ = std::move(fds); }
  FdTable fd_table() const { return fd_table_.load(std::memory_order_acquire); }

 private:
  // On the worker's thread, first thing: a private descriptor table when configured.
  void TakePrivateFdTable();

  // --io=uring (server/uring_loop.h) runs this worker's connections on its own loop, with the
  // worker's listeners, handler, buffers, limits and counters.
  friend class UringLoop;

  // A connection that waits for upstream answers longer than this is closed: the handler
  // answers every request by its own deadline, so only a lost in-flight table (a reload) gets
  // here.
  static constexpr absl::Duration kUpstreamBackstop = absl::Seconds(60);

  // --io=uring, once its ring is set up: frees the libevent loop's own events (accepts, stop,
  // reload, the accept-resume and drain timers, the heartbeat, the upstream tick), which would
  // act behind the ring's back; base_ keeps only the upstream channel's and its stream pool's,
  // which the ring runs (server/uring_upstream.cc).
  void LeaveBaseToUpstreams();

  static void OnAcceptable(int fd, short what, void* arg);
  static void OnConnectionEvent(int fd, short what, void* arg);
  static void OnStopRequested(int fd, short what, void* arg);
  static void OnHandlerOffered(int fd, short what, void* arg);
  static void OnAcceptResume(int fd, short what, void* arg);
  static void OnDrainDeadline(int fd, short what, void* arg);
  static void OnUpstreamTick(int fd, short what, void* arg);

  // Forwarding handlers (HandlerFactory::Upstreams): a datagram from upstream `index`, and the
  // delivery of one answer (in upstream_answer_) to the connection the handler named.
  void OnUpstreamDatagram(int index, absl::Span<const uint8_t> datagram);
  // A whole frame from a stream connection to upstream `index` (UpstreamStreamConfig).
  void OnUpstreamStreamFrame(int index, absl::Span<const uint8_t> frame);
  // On the io_uring loop, hands the answer to it (UringLoop::DeliverUpstream).
  void DeliverUpstream(const UpstreamAnswer& answer);
  // Sends what the handler queued for upstreams during the last call.
  void FlushUpstream() {
    if (upstream_ != nullptr && !upstream_queue_->empty()) upstream_->Send(*upstream_queue_);
  }
  // After a parked connection ran Advance: closes it, or parks it again for its new state.
  void AfterAdvance(Connection* connection, ConnectionState state);

  // Accepts up to `limit` connections from `listener_fd`, serving each at once.
  void AcceptBurst(int listener_fd, int limit);
  void PauseAccepting(int error);
  void SetAccepting(bool on);
  // Serves the scratch connection (a fresh socket from `peer`, as Connection::peer()) and
  // parks it if it must wait.
  void ServeAccepted(int fd, const std::array<uint8_t, 16>& peer);
  // Parks `connection` in the event loop: waits for what its state needs (readable, or
  // writable for kWriting) until its deadline (ComputeParkDeadline). Closes it instead when
  // draining and it is idle.
  void Park(Connection* connection);
  // Counts the timeout of a parked `connection` under its cause, by its state.
  void CountTimeout(const Connection& connection);
  void Close(Connection* connection);
  Connection* AcquireConnection();
  // Counts `peer` (its client key: --client-prefix-v4/-v6) against
  // --max-connections-per-client into `connection`; false (and nothing counted) when that
  // client already has its share parked, on any worker.
  bool CountPeer(const std::array<uint8_t, 16>& peer, Connection* connection);
  void UncountPeer(Connection* connection);
  // Makes sure the scratch connection has an output buffer: a spare one, or a new one while
  // fewer than max_connections_ + 1 exist. False when none can be had.
  bool RefillScratchOutput();
  // Takes `connection`'s output buffer (if any) back: to the scratch connection if it lacks
  // one, else to the spares.
  void ReleaseOutput(Connection* connection);
  void BeginDrain();
  void CloseListeners();

  const int index_;
  const int cpu_;
  const ServerConfig config_;
  const int max_connections_;
  const size_t input_buffer_bytes_;
  const size_t output_buffer_bytes_;
  // Declared before the handlers, which count into it: it outlives them.
  HandlerCounters handler_counters_;
  // Declared before handler_ so that the handler goes first: it may read the factory's data.
  std::shared_ptr<const HandlerFactory> factory_;
  std::unique_ptr<Handler> handler_;
  ConnectionEnv env_;
  WorkerStats stats_;

  ScopedFd stop_fd_;   // eventfd: RequestStop writes, the loop reads
  ScopedFd offer_fd_;  // eventfd: OfferHandler writes, the loop reads
  // The mailbox of OfferHandler: the worker's loop takes it once per reload, never per request.
  std::mutex offer_mutex_;
  std::shared_ptr<const HandlerFactory> offered_factory_;
  std::unique_ptr<Handler> offered_handler_;
  uint64_t offered_generation_ = 0;
  std::atomic<uint64_t> serving_generation_{0};
  std::vector<ScopedFd> listeners_;
  // Parked connections per client, server-wide (server/client_limits.h); owned by the Server.
  ClientTable* const clients_;

  // Declared before every event so that it is freed after them.
  std::unique_ptr<event_base, void (*)(event_base*)> base_;
  std::vector<std::unique_ptr<event, void (*)(event*)>> accept_events_;
  std::unique_ptr<event, void (*)(event*)> stop_event_;
  std::unique_ptr<event, void (*)(event*)> offer_event_;
  std::unique_ptr<event, void (*)(event*)> resume_timer_;
  std::unique_ptr<event, void (*)(event*)> drain_timer_;
  // Its heartbeat timer lives on base_; stopped in ~Worker before base_ goes.
  WorkerMetrics metrics_;
  const ProxyPolicy proxy_policy_;  // config_.proxy_protocol_from, parsed by Server::Create

  // The single pass runs here; parking swaps its buffers into a pooled Connection.
  std::unique_ptr<Connection> scratch_;
  // Parked connections: grows on demand up to max_connections_, never shrinks, so steady
  // state allocates nothing. `free_` and `active_` point into `pool_`.
  std::vector<std::unique_ptr<Connection>> pool_;
  std::vector<Connection*> free_;
  std::vector<Connection*> active_;
  // Output buffers not in use; with those held by the scratch and by parked connections that
  // wait to write, never more than max_connections_ + 1 (output_buffers_).
  std::vector<std::unique_ptr<OutputBuffer>> spare_outputs_;
  int output_buffers_ = 0;

  // Forwarding (server/upstream_channel.h); all null/empty when the handler answers itself.
  // upstream_ goes before base_ (declared after it, destroyed first).
  std::unique_ptr<UpstreamChannel> upstream_;
  std::unique_ptr<UpstreamQueue> upstream_queue_;  // 1 MiB: only when forwarding
  // The answer the handler renders for one upstream reply or expiry, then copied to the
  // connection's output.
  std::unique_ptr<OutputBuffer> upstream_answer_;
  std::unique_ptr<event, void (*)(event*)> upstream_tick_{nullptr, nullptr};
  // Connections with answers still to come from upstream, by Connection::id() (the libevent
  // loop's; the io_uring loop keeps its own).
  absl::flat_hash_map<uint64_t, Connection*> waiting_upstream_;
  // The io_uring loop while it runs this worker (set and cleared by it); null on libevent.
  UpstreamDelivery* uring_ = nullptr;
  uint64_t next_connection_id_ = 1;
  std::vector<int> foreign_listeners_;
  std::atomic<FdTable> fd_table_{FdTable::kPending};

  bool accepting_ = false;
  bool paused_ = false;
  bool draining_ = false;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_WORKER_H_
