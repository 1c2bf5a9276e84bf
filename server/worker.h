// One worker: a thread pinned to one CPU with its own listening sockets (one per --listen
// address), its own I/O driver (server/drivers/: libevent or io_uring, --io) running its own
// worker core (server/core/worker_core.h: the connection lifecycle), its own Handler, buffers
// and counters. Workers share no mutable state on the single pass. What they share: the
// per-client table (server/core/client_limits.h: sharded mutexes, touched only when a connection
// parks or a parked one closes); counters and metrics that other threads read with relaxed
// loads; RequestStop (an eventfd write) and OfferHandler (a mailbox under a mutex taken once per
// reload).
//
// This class is the thread and its mailboxes; what happens to a connection is the core's
// (docs/design.md "The connection path").
#ifndef ONEPASS_SERVER_WORKER_H_
#define ONEPASS_SERVER_WORKER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/scoped_fd.h"
#include "handlers/handler.h"
#include "server/core/client_limits.h"
#include "server/core/io_driver.h"
#include "server/core/proxy_protocol.h"
#include "server/core/stats.h"
#include "server/core/timer_queue.h"
#include "server/core/worker_core.h"
#include "server/core/worker_metrics.h"
#include "server/server_config.h"
#include "server/transport/tls/tls_transport_factory.h"
#include "server/xdp/serve/xdp_queue.h"

namespace onepass {

class Worker {
 public:
  // `cpu` < 0: not pinned. `listeners` are bound, listening, non-blocking sockets.
  // The worker creates its handler with `factory` (on this thread), counting into its own
  // HandlerCounters, and keeps the factory alive as long as it uses the handler.
  // `max_connections`: the most connections parked at once on this worker. `clients`: the
  // server-wide per-client counts (--max-connections-per-client), shared with the other
  // workers; it outlives the worker.
  // `tls`: the context its TLS listeners' connections start under (null without any).
  Worker(int index, int cpu, std::vector<ScopedFd> listeners,
         std::shared_ptr<const HandlerFactory> factory, const ServerConfig& config,
         std::shared_ptr<const tls::TlsServerContext> tls, const ProxyPolicy& proxy_policy,
         int max_connections, ClientTable* clients, ClientTable* tls_clients = nullptr);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Creates the driver (config.io) and the core, and registers the listeners. On the
  // constructing thread.
  absl::Status Init();
  // The thread body: pins itself to its CPU and runs the driver until the core has drained.
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

  // Any thread (SIGHUP): connections accepted on the TLS listeners from the worker's next event
  // on start under `context`; those in flight finish under theirs.
  void OfferTls(std::shared_ptr<const tls::TlsServerContext> context);
  // Any thread after Init: handshakes and failures on this worker's TLS listeners (all zero
  // without any).
  const tls::TlsStats& tls_stats() const { return tls_ != nullptr ? tls_->stats() : kNoTlsStats; }

  // Any thread: the reload generation this worker serves (0: the data it started with). It
  // rises only after the worker has let go of the previous handler and factory, so data
  // replaced at generation <= it is no longer referenced by this worker (Server::TakeRetired).
  uint64_t serving_generation() const {
    return serving_generation_.load(std::memory_order_acquire);
  }
  int index() const { return index_; }
  // After Init.
  size_t input_buffer_bytes() const { return core_->input_buffer_bytes(); }
  size_t output_buffer_bytes() const { return core_->output_buffer_bytes(); }
  int cpu() const { return cpu_; }
  // The listening sockets, in --listen order; after Init, until the worker starts draining.
  // For Server::DupListeners, before the thread starts.
  std::vector<int> listener_fds() const { return driver_->listener_fds(); }
  // Any thread, after Init.
  StatsSnapshot ReadStats() const { return core_->ReadStats(); }
  // The handler's counters (HandlerFactory::Counters), kept across reloads. Only handlers for
  // this worker may be given the block (CreateHandler), and only this worker's thread writes
  // it; any thread may read it.
  HandlerCounters& handler_counters() { return core_->handler_counters(); }
  const HandlerCounters& handler_counters() const { return core_->handler_counters(); }
  // The histogram, gauges and heartbeat for the metrics listener; any thread may Read.
  const WorkerMetrics& metrics() const { return core_->metrics(); }

  // --xdp, after Init and before the thread starts (or on its thread: OfferXdp): this worker
  // also serves `queue` of `ifname` over AF_XDP, in its own loop (server/xdp/serve/xdp_queue.h).
  // Returns the AF_XDP socket's fd, for XdpProgram::SetSocket.
  absl::StatusOr<int> ServeXdp(const std::string& ifname, uint32_t queue,
                               const std::vector<uint16_t>& ports);
  // Any thread while the worker runs (a hand-over's successor, once the previous process has
  // let go of the interface: Server::TakeOverXdp): ServeXdp on the worker's thread at its next
  // event, its result given to `done` there.
  struct XdpOffer {
    std::string ifname;
    uint32_t queue = 0;
    std::vector<uint16_t> ports;
    std::function<void(absl::StatusOr<int>)> done;
  };
  void OfferXdp(XdpOffer offer);
  // Any thread: the AF_XDP path's counters of this worker's queues (zero without --xdp).
  xdp::XdpStatsSnapshot xdp_stats() const;

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
  void OnStopRequested();
  // At the thread's end: closes the AF_XDP queues it opened (OfferXdp), in its own table.
  void EndXdpOnThread();
  // The mailbox of OfferHandler, OfferTls and OfferXdp: a new handler, a new TLS context, AF_XDP
  // queues to serve.
  void OnOffered();
  static const tls::TlsStats kNoTlsStats;

  const int index_;
  const int cpu_;
  const ServerConfig config_;
  // The context at start, until Init hands it to the TLS transports, which alone hold the
  // context in use (a reload's replaces it).
  std::shared_ptr<const tls::TlsServerContext> start_tls_;
  const ProxyPolicy proxy_policy_;  // config_.proxy_protocol_from, parsed by Server::Create
  const int max_connections_;
  ClientTable* const clients_;
  ClientTable* const tls_clients_;  // --tls-max-connections-per-client; null: in clients_
  std::shared_ptr<const HandlerFactory> factory_;  // until Init hands it to the core
  std::vector<ScopedFd> listeners_;                // until Init hands them to the driver

  ScopedFd stop_fd_;   // eventfd: RequestStop writes, the loop reads
  ScopedFd offer_fd_;  // eventfd: OfferHandler writes, the loop reads
  // The mailbox of OfferHandler: the worker's loop takes it once per reload, never per request.
  std::mutex offer_mutex_;
  std::shared_ptr<const HandlerFactory> offered_factory_;
  std::unique_ptr<Handler> offered_handler_;
  uint64_t offered_generation_ = 0;
  std::shared_ptr<const tls::TlsServerContext> offered_tls_;
  std::vector<XdpOffer> offered_xdp_;
  std::atomic<uint64_t> serving_generation_{0};
  std::vector<int> foreign_listeners_;
  std::atomic<FdTable> fd_table_{FdTable::kPending};

  // Destroyed in reverse: the core and the watches (which use the driver) before the driver,
  // the driver before the timers.
  TimerQueue timers_;
  std::unique_ptr<IoDriver> driver_;
  // The TLS listeners' transports (null without --tls-listen): before the core, which keeps a
  // pointer, and after the driver, whose watches the core's connections hold.
  std::unique_ptr<TlsTransportFactory> tls_;
  // The handler's upstreams (null when it forwards nothing): its watches use the driver.
  std::unique_ptr<Forwarder> upstream_;
  std::unique_ptr<WorkerCore> core_;
  std::unique_ptr<FdWatch> stop_watch_;
  std::unique_ptr<FdWatch> offer_watch_;
  // --xdp: after the core (their adapters call its handler), before the driver. Grown on the
  // worker's thread after start by OfferXdp, read by xdp_stats() from others: under the mutex.
  mutable std::mutex xdp_mutex_;
  std::vector<std::unique_ptr<xdp::XdpQueue>> xdp_;
  size_t xdp_opened_before_start_ = 0;  // the rest were opened on the thread (EndXdpOnThread)
  xdp::XdpStatsSnapshot xdp_closed_;    // the counters of those, once closed
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_WORKER_H_
