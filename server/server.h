// The server: listeners, workers and their threads, start and stop. Knows no protocol: it is
// given a HandlerFactory (handlers/registry.h in onepassd, a test handler in tests).
//
// Usage (server/server_main.cc, tests/integration/server/):
//   auto server = Server::Create(config, std::move(factory));   // binds every listener
//   server->Start();                                              // one thread per worker
//   server->Reload(NewHandlerFactory(name));                      // SIGHUP: new data
//   ... server->RequestStop();  server->Wait();                   // drain and join
#ifndef ONEPASS_SERVER_SERVER_H_
#define ONEPASS_SERVER_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/socket_address.h"
#include "handlers/handler.h"
#include "server/core/stats.h"
#include "server/core/worker_metrics.h"
#include "server/placement.h"
#include "server/server_config.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_stats.h"
#include "server/worker.h"
#include "server/xdp/serve/xdp_interfaces.h"

namespace onepass {

class Server {
 public:
  // Validates `config`, places the workers (server/placement.h), binds and listens on every
  // address (in worker order, with CPU steering when placed so) and creates one Handler per
  // worker: factory->CreateHandler() is called for worker 0, 1, ... in that order, on this
  // thread. Errors are one sentence saying what to change.
  // With `inherited` (sockets taken over from a running server: server/restart/listener_handover.h)
  // nothing is bound: the workers accept from those.
  // `tls`: the certificate, key and ticket keys the --tls-listen connections start under
  // (required with config.tls_listen; a reload's new one comes through ReloadTls).
  static absl::StatusOr<std::unique_ptr<Server>> Create(
      const ServerConfig& config, std::unique_ptr<HandlerFactory> factory,
      std::shared_ptr<const tls::TlsServerContext> tls = nullptr,
      std::vector<std::vector<ScopedFd>> inherited = {});
  // The error of a --tls-listen without a context, as Create says it.
  static absl::Status MissingTlsContext();
  // The checks of Create that need no socket and no handler (limits, CPUs, addresses), so that
  // a program can fail fast before loading its data. kOptional: for a data check that binds
  // nothing (onepassd --check), where no --listen is fine.
  enum class ListenRequirement { kNeeded, kOptional };
  static absl::Status CheckConfig(const ServerConfig& config,
                                  ListenRequirement listen = ListenRequirement::kNeeded);
  // The check of Create that needs the handler: --xdp with a forwarding handler (one whose
  // Forwarding() names upstreams: the DNS frontend, --dns-backend) is refused. The XDP program
  // takes every TCP segment of the --listen ports on the interface, so the kernel's listeners
  // (which reach the upstreams) never see those clients, and the AF_XDP path has no upstream.
  static absl::Status CheckXdpHandler(const ServerConfig& config, const HandlerFactory& factory);
  // Stops and joins the workers if still running.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The bound addresses in --listen order, with the real ports; and --tls-listen's.
  const std::vector<SocketAddress>& addresses() const { return addresses_; }
  const std::vector<SocketAddress>& tls_addresses() const { return tls_addresses_; }
  const WorkerPlacement& placement() const { return placement_; }
  int worker_count() const { return static_cast<int>(workers_.size()); }

  // Dups of every worker's listening sockets, by_worker[w][a], for a hand-over to a new process.
  // Before Start.
  std::vector<std::vector<ScopedFd>> DupListeners() const;

  // Starts one thread per worker (and with --xdp one for TakeOverXdp after a hand-over and
  // WatchKernelFlows). Call once.
  void Start();
  // Any thread, async-signal-safe: each worker stops accepting and drains (bounded by
  // config.drain_timeout).
  void RequestStop();
  // Joins the worker threads (after RequestStop they return within the drain timeout).
  void Wait();

  // The main thread (SIGHUP), after Start: `factory` holds freshly loaded data (or the error
  // of loading it). On success every worker gets a new Handler from it and swaps it in on its
  // own thread between two events (Worker::OfferHandler): no connection is dropped or
  // delayed. The previous data is kept (retired) until every worker has let it go, so that no
  // worker frees it on its serving path: TakeRetired hands it over for freeing. On failure
  // (load error, another protocol, buffers the running workers lack) nothing changes and the
  // error says why; the workers keep the previous data. Counted as reloads/reload_failures.
  absl::Status Reload(absl::StatusOr<std::unique_ptr<HandlerFactory>> factory);

  // The main thread (SIGHUP), after Start: the TLS listeners' connections accepted from each
  // worker's next event on start under `context` (a new certificate, key or ticket keys,
  // built and checked by the caller); those in flight finish under the one they started with,
  // so none is dropped. Nothing to do without --tls-listen.
  void ReloadTls(std::shared_ptr<const tls::TlsServerContext> context);
  // Any thread: the context new TLS connections start with (null without --tls-listen).
  std::shared_ptr<const tls::TlsServerContext> tls_context() const {
    std::lock_guard<std::mutex> lock(tls_mutex_);
    return tls_context_;
  }
  // The main thread: a reload that failed before reaching Reload (the TLS certificate or key
  // of a SIGHUP did not load) counts as reload_failures does for one that Reload refused.
  void CountFailedReload() { reload_failures_.fetch_add(1, std::memory_order_relaxed); }
  // Any thread: the TLS counters summed over workers.
  tls::TlsStatsSnapshot TlsStats() const;

  // The main thread: the data that Reload replaced and every worker has stopped using, for the
  // caller to free off the workers (freeing 1M names takes ~0.5 s of CPU: a worker doing it
  // would hold up each of its connections that long). Empty while a worker has not switched.
  std::vector<std::shared_ptr<const HandlerFactory>> TakeRetired();
  // The main thread: true while replaced data waits for a worker to switch.
  bool retiring() const { return !retired_.empty(); }

  // Any thread: the counters summed over workers, or those of worker `index`.
  StatsSnapshot Stats() const;
  StatsSnapshot StatsOf(int worker) const;
  // Any thread: the handler's counters (handler_counter_specs(), from HandlerFactory::Counters)
  // summed over workers, by index; they survive reloads.
  absl::Span<const CounterSpec> handler_counter_specs() const {
    return {counter_specs_.load(std::memory_order_acquire), counter_count_};
  }
  std::vector<uint64_t> HandlerCounts() const;
  // Stats().Format(), the TLS counters (with --tls-listen) and the handler's counters:
  // `family{label="value"}=N` pairs.
  std::string FormatStats() const;
  // --xdp: the AF_XDP path's counters summed over workers, and one line per interface (its
  // mode, the queues served), for the start-up report. Empty without --xdp. After a hand-over
  // the interfaces are taken over later (TakeOverXdp), each logged then.
  bool xdp() const { return xdp_serving_.load(std::memory_order_relaxed); }
  xdp::XdpStatsSnapshot XdpStats() const;
  xdp::XdpStatsSnapshot XdpStatsOf(int w) const { return workers_[w]->xdp_stats(); }
  const std::vector<std::string>& xdp_report() const { return xdp_report_; }
  // Any thread, for the metrics listener (server/ops/ops_endpoints.h): worker `w`'s CPU (-1: not
  // pinned), its handler counters, and its histogram, gauges and heartbeat.
  int WorkerCpu(int w) const { return workers_[w]->cpu(); }
  std::vector<uint64_t> HandlerCountsOf(int w) const;
  WorkerMetricsSnapshot WorkerMetricsOf(int w) const { return workers_[w]->metrics().Read(); }

 private:
  Server() = default;
  // --xdp, after the workers' Init (server_xdp.cc): attaches and gives worker k queue k of
  // each interface; after a hand-over, leaves that to TakeOverXdp.
  void AttachXdp(const ServerConfig& config, bool handed_over);
  // One interface: attaches the program, has queue q opened on worker q and registered with
  // it by `open_queue(program, q)`; the line that says how it serves, "warning: ..." when it
  // does not.
  using XdpQueueOpener = std::function<absl::Status(const xdp::XdpProgram&, uint32_t)>;
  std::string ServeXdpInterface(const std::string& ifname, xdp::XdpModePreference mode,
                                const XdpQueueOpener& open_queue);
  // The thread started by Start after a hand-over: waits until the previous process has let go
  // of each interface (its AF_XDP sockets hold the queues until it exits), then serves it.
  void TakeOverXdp();
  // On the same thread, once the path is up (at start, or after TakeOverXdp): ends the
  // programs' grace period (xdp_kernel_flows_grace_) as soon as the kernel's connections on
  // the served ports from before it came up have all closed (kernel_connections.h), logged.
  void WatchKernelFlows();
  // RequestStop's first step with --xdp: every attached program's drain (XdpProgram::BeginDrain).
  void BeginXdpDrain();
  // On the takeover thread: queue `queue` of `ifname` opened and registered with `program` on
  // worker `queue`'s thread (whose descriptor table may be its own).
  absl::Status OpenXdpQueueOnWorker(const xdp::XdpProgram& program, const std::string& ifname,
                                    uint32_t queue);

  // The newest data; each worker also holds the factory of the handler it runs.
  std::shared_ptr<const HandlerFactory> factory_;
  // Replaced data and the generation that replaced it; main thread only.
  struct Retired {
    std::shared_ptr<const HandlerFactory> factory;
    uint64_t replaced_at;
  };
  std::vector<Retired> retired_;
  // The protocol's counter list (static storage): as many for every reload's factory, their
  // labels those of the newest (HandlerFactory::ArrangeAfter), read without touching
  // factory_, which the main thread swaps on reload.
  std::atomic<const CounterSpec*> counter_specs_{nullptr};
  size_t counter_count_ = 0;
  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> reload_failures_{0};
  WorkerPlacement placement_;
  std::vector<SocketAddress> addresses_;
  std::vector<SocketAddress> tls_addresses_;
  mutable std::mutex tls_mutex_;  // a reload writes tls_context_, /metrics reads it
  std::shared_ptr<const tls::TlsServerContext> tls_context_;
  // Declared before the workers, which count into it: it outlives them.
  std::unique_ptr<ClientTable> clients_;
  std::unique_ptr<ClientTable> tls_clients_;  // with --tls-listen
  // --xdp: destroyed after the workers (whose AF_XDP sockets go first), so each program
  // detaches from an interface no socket of ours uses.
  // Grown by xdp_thread_ (a takeover), read by RequestStop's drain and the watch's end of the
  // grace: under xdp_programs_mutex_, which also orders the two's writes to the programs.
  std::vector<xdp::AttachedInterface> xdp_interfaces_;
  std::mutex xdp_programs_mutex_;
  std::vector<std::string> xdp_report_;
  std::atomic<bool> xdp_serving_{false};
  std::vector<uint16_t> xdp_ports_;  // the plain --listen ports
  // How long the kernel's connections of those ports may outlive the program's attach (the
  // longest a connection lives, --max-connection-ms, and its request's wait before that):
  // their segments pass to the kernel until then (xdp::XdpProgramConfig::kernel_flows_grace).
  absl::Duration xdp_kernel_flows_grace_;
  // After a hand-over: what TakeOverXdp serves, and how long it waits for each interface.
  struct XdpTakeover {
    std::vector<std::string> ifnames;
    xdp::XdpModePreference mode = xdp::XdpModePreference::kNativeThenGeneric;
    absl::Duration wait;
  };
  XdpTakeover xdp_takeover_;
  std::thread xdp_thread_;  // with --xdp: TakeOverXdp after a hand-over, then WatchKernelFlows
  std::atomic<bool> stopping_{false};  // RequestStop: the takeover and the watch give up
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  bool private_fd_tables_ = false;  // --private-fd-tables
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_SERVER_H_
