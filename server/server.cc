#include "server/server.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/cpu_list.h"
#include "common/descriptor_table.h"
#include "common/log.h"
#include "server/core/allow_list.h"
#include "server/core/proxy_protocol.h"
#include "server/descriptor_limit.h"
#include "server/drivers/uring/uring_driver.h"
#include "server/listener.h"

namespace onepass {
namespace {

using ListenRequirement = Server::ListenRequirement;

absl::Status ValidateConfig(const ServerConfig& config, ListenRequirement listen) {
  if (config.listen.empty() && config.tls_listen.empty() && listen == ListenRequirement::kNeeded) {
    return absl::InvalidArgumentError(
        "nothing to listen on; give --listen ADDR:PORT (or --tls-listen ADDR:PORT)");
  }
  if (config.tls_max_handshakes <= 0 || config.tls_handshakes_per_client < 0 ||
      config.tls_full_per_client < 0 || config.tls_resumed_per_client < 0 ||
      config.tls_idle_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--tls-max-handshakes must be positive, --tls-handshakes-per-client, "
        "--tls-full-per-client, "
        "--tls-resumed-per-client (0: unlimited) and --tls-idle-timeout-ms not negative");
  }
  if (config.backlog <= 0) return absl::InvalidArgumentError("--backlog must be positive");
  if (config.io == IoLoop::kUring) {
    if (absl::Status uring = ProbeUring(); !uring.ok()) return uring;
  }
  if (config.accept_burst < 0) {
    return absl::InvalidArgumentError(
        "--accept-burst must be positive, or 0 for the I/O driver's own default");
  }
  if (config.max_connections <= 0 || config.max_connections_per_client <= 0 ||
      config.tls_max_connections_per_client <= 0) {
    return absl::InvalidArgumentError(
        "--max-connections, --max-connections-per-client and --tls-max-connections-per-client "
        "must be positive");
  }
  if (config.client_prefix_v4 < 0 || config.client_prefix_v4 > 32 || config.client_prefix_v6 < 0 ||
      config.client_prefix_v6 > 128) {
    return absl::InvalidArgumentError(
        "--client-prefix-v4 must be 0..32 and --client-prefix-v6 0..128 (bits of a client's "
        "address that identify it)");
  }
  if (config.read_timeout <= absl::ZeroDuration() || config.write_timeout <= absl::ZeroDuration() ||
      config.max_connection_time <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--read-timeout-ms, --write-timeout-ms and --max-connection-ms must be positive");
  }
  if (config.keepalive < absl::ZeroDuration() || config.drain_timeout < absl::ZeroDuration() ||
      config.linger < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "--keepalive-ms, --drain-timeout-ms and --linger-ms must not be negative");
  }
  if (absl::Status allow = AllowList::FromList(config.allow_from).status(); !allow.ok()) {
    return allow;
  }
  return ProxyPolicy::FromList(config.proxy_protocol_from).status();
}

// --listen's addresses, then --tls-listen's: the order of every worker's listeners (the core
// serves those from config.listen.size() on through TLS).
absl::StatusOr<std::vector<SocketAddress>> ListenAddresses(const ServerConfig& config) {
  std::vector<SocketAddress> addresses;
  for (const std::string& text : config.listen) {
    absl::StatusOr<SocketAddress> address = ParseSocketAddress(text, {.what = "listen address"});
    if (!address.ok()) return address.status();
    addresses.push_back(*address);
  }
  for (const std::string& text : config.tls_listen) {
    absl::StatusOr<SocketAddress> address =
        ParseSocketAddress(text, {.what = "TLS listen address (--tls-listen)"});
    if (!address.ok()) return address.status();
    addresses.push_back(*address);
  }
  return addresses;
}

// The kernel silently caps the listen backlog at net.core.somaxconn: say so once.
void WarnIfBacklogCapped(int backlog) {
  std::ifstream file("/proc/sys/net/core/somaxconn");
  int somaxconn = 0;
  if (file >> somaxconn && somaxconn < backlog) {
    LogWarning("--backlog %d is capped by net.core.somaxconn=%d; raise it (deploy/ sysctls)",
               backlog, somaxconn);
  }
}

}  // namespace

absl::Status Server::CheckConfig(const ServerConfig& config, ListenRequirement listen) {
  if (absl::Status valid = ValidateConfig(config, listen); !valid.ok()) return valid;
  if (absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(config, AllowedCpus());
      !placement.ok()) {
    return placement.status();
  }
  return ListenAddresses(config).status();
}

absl::Status Server::CheckXdpHandler(const ServerConfig& config, const HandlerFactory& factory) {
  if (config.xdp.empty() || !factory.Forwarding().has_value()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "--xdp cannot serve a handler that forwards to upstreams (--dns-backend): the XDP "
      "program takes every TCP segment to the --listen ports on those interfaces, and the "
      "AF_XDP path reaches no upstream, so those clients would wait for nothing; drop --xdp, or "
      "run the frontend as a onepassd of its own without --xdp");
}

absl::Status Server::MissingTlsContext() {
  return absl::InvalidArgumentError(
      "--tls-listen needs a certificate and its key: give --tls-cert FILE and --tls-key FILE");
}

absl::StatusOr<std::unique_ptr<Server>> Server::Create(
    const ServerConfig& config, std::unique_ptr<HandlerFactory> factory,
    std::shared_ptr<const tls::TlsServerContext> tls,
    std::vector<std::vector<ScopedFd>> inherited) {
  if (absl::Status valid = ValidateConfig(config, ListenRequirement::kNeeded); !valid.ok()) {
    return valid;
  }
  if (!config.tls_listen.empty() && tls == nullptr) return MissingTlsContext();
  if (absl::Status xdp = CheckXdpHandler(config, *factory); !xdp.ok()) return xdp;
  // Parsed once here (ValidateConfig has checked it); each worker keeps its own copy.
  const ProxyPolicy proxy_policy = *ProxyPolicy::FromList(config.proxy_protocol_from);
  auto server = std::unique_ptr<Server>(new Server());
  server->factory_ = std::move(factory);
  server->private_fd_tables_ = config.private_fd_tables;

  absl::StatusOr<WorkerPlacement> placement = PlaceWorkers(config, AllowedCpus());
  if (!placement.ok()) return placement.status();
  server->placement_ = *std::move(placement);
  const WorkerPlacement& place = server->placement_;
  const int workers = static_cast<int>(place.worker_cpus.size());
  if (!place.note.empty()) LogInfo("%s", place.note);

  absl::StatusOr<std::vector<SocketAddress>> addresses = ListenAddresses(config);
  if (!addresses.ok()) return addresses.status();
  const std::vector<SocketAddress>& requested = *addresses;
  WarnIfBacklogCapped(config.backlog);
  std::vector<int> steering_cpus;
  if (place.cpu_steering) steering_cpus = place.worker_cpus;
  const bool handed_over = !inherited.empty();  // a restart's (server/restart/)
  absl::StatusOr<ListenerSet> listeners =
      !handed_over ? OpenListeners(requested, workers, config.backlog, steering_cpus)
                   : AdoptListeners(requested, workers, std::move(inherited));
  if (!listeners.ok()) return listeners.status();
  const auto plain_end = listeners->bound.begin() + static_cast<long>(config.listen.size());
  server->addresses_.assign(listeners->bound.begin(), plain_end);
  server->tls_addresses_.assign(plain_end, listeners->bound.end());
  if (!server->tls_addresses_.empty()) server->tls_context_ = tls;

  // The soft descriptor limit up to the hard one, and the connections lowered to fit it
  // (server/descriptor_limit.h).
  absl::StatusOr<DescriptorFit> fit =
      RaiseDescriptorLimit(config.max_connections, workers, static_cast<int>(requested.size()));
  if (!fit.ok()) return fit.status();
  if (!fit->note.empty()) LogWarning("%s", fit->note);
  // --max-connections is for the whole server (RFC 9210 §4.5 counts per server): each worker
  // gets an equal share, rounded up (down when lowered, so that the shares fit the
  // descriptors).
  const int per_worker = fit->note.empty() ? (fit->max_connections + workers - 1) / workers
                                           : std::max(1, fit->max_connections / workers);
  server->counter_specs_.store(server->factory_->Counters().data(), std::memory_order_release);
  server->counter_count_ = server->factory_->Counters().size();
  server->clients_ = std::make_unique<ClientTable>(config.max_connections_per_client);
  if (!config.tls_listen.empty()) {
    server->tls_clients_ = std::make_unique<ClientTable>(config.tls_max_connections_per_client);
  }
  for (int w = 0; w < workers; ++w) {
    auto worker =
        std::make_unique<Worker>(w, place.worker_cpus[w], std::move(listeners->by_worker[w]),
                                 server->factory_, config, server->tls_context_, proxy_policy,
                                 per_worker, server->clients_.get(), server->tls_clients_.get());
    if (absl::Status init = worker->Init(); !init.ok()) return init;
    server->workers_.push_back(std::move(worker));
  }
  LogInfo(
      "%d workers on CPUs %s, %s loop, steering by %s, backlog %d, %d parked connections per "
      "worker",
      workers, place.pinned ? FormatCpuList(place.worker_cpus) : "(not pinned)",
      config.io == IoLoop::kUring ? "io_uring" : "epoll (libevent)",
      place.cpu_steering ? "CPU" : "hash", config.backlog, per_worker);
  if (!config.xdp.empty()) server->AttachXdp(config, handed_over);
  return server;
}

Server::~Server() {
  if (!threads_.empty() || xdp_thread_.joinable()) {
    RequestStop();
    Wait();
  }
}

std::vector<std::vector<ScopedFd>> Server::DupListeners() const {
  std::vector<std::vector<ScopedFd>> dups;
  for (const auto& worker : workers_) {
    dups.emplace_back();
    for (int fd : worker->listener_fds()) dups.back().emplace_back(fcntl(fd, F_DUPFD_CLOEXEC, 0));
  }
  return dups;
}

void Server::Start() {
  std::vector<std::vector<int>> listener_fds;
  for (const auto& worker : workers_) listener_fds.push_back(worker->listener_fds());
  if (private_fd_tables_) {
    // Workers let go of the process's descriptors (an old CRL's sealed file) on their own
    // tables: the closer closes them in the process's (common/descriptor_table.h).
    EnableProcessTableCloser();
    for (size_t w = 0; w < workers_.size(); ++w) {
      std::vector<int> foreign;
      for (size_t other = 0; other < workers_.size(); ++other) {
        if (other != w)
          foreign.insert(foreign.end(), listener_fds[other].begin(), listener_fds[other].end());
      }
      workers_[w]->set_foreign_listeners(std::move(foreign));
    }
  }
  for (auto& worker : workers_) {
    Worker* w = worker.get();
    threads_.emplace_back([w] { w->Run(); });
  }
  if (!xdp_takeover_.ifnames.empty() || !xdp_interfaces_.empty()) {
    xdp_thread_ = std::thread([this] {
      if (!xdp_takeover_.ifnames.empty()) TakeOverXdp();
      WatchKernelFlows();
    });
  }
  if (!private_fd_tables_) return;
  // A worker with a table of its own holds its listeners there; the main thread's copies would
  // keep them listening after the worker closes them at drain (a restart's SYNs would queue on
  // a socket nobody accepts from), so they go once the worker has its copy. Threads start in
  // microseconds; the wait is bounded all the same.
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  for (size_t w = 0; w < workers_.size(); ++w) {
    while (workers_[w]->fd_table() == Worker::FdTable::kPending && absl::Now() < give_up) {
      absl::SleepFor(absl::Microseconds(100));
    }
    if (workers_[w]->fd_table() == Worker::FdTable::kPrivate) {
      for (int fd : listener_fds[w]) close(fd);
    }
  }
}

void Server::RequestStop() {
  stopping_.store(true, std::memory_order_relaxed);
  // Before the workers drain: from here the XDP programs pass new SYNs to the kernel (the new
  // process's listeners in a restart) and the other segments of the kernel's connections too,
  // while each worker's AF_XDP queue finishes the connections it holds.
  BeginXdpDrain();
  for (auto& worker : workers_) worker->RequestStop();
}

void Server::Wait() {
  // First: it may wait on a worker, which serves its offers until its thread ends.
  if (xdp_thread_.joinable()) xdp_thread_.join();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

absl::Status Server::Reload(absl::StatusOr<std::unique_ptr<HandlerFactory>> loaded) {
  absl::Status status = loaded.status();
  std::vector<std::unique_ptr<Handler>> handlers;
  // Upstreams that stay keep their indexes (and so their sockets and requests in flight).
  if (status.ok() && (*loaded)->Name() == factory_->Name()) (*loaded)->ArrangeAfter(*factory_);
  if (status.ok() && (*loaded)->Name() != factory_->Name()) {
    status = absl::InvalidArgumentError(
        absl::StrCat("the new data is for ", (*loaded)->Name(), ", not ", factory_->Name()));
  }
  // The workers' buffers were sized for the first data at startup and are pooled: larger
  // needs would mean reallocating under parked connections, so such a reload is refused.
  if (status.ok() && !workers_.empty() &&
      (*loaded)->OutputBufferBytes() > workers_.front()->output_buffer_bytes()) {
    status = absl::FailedPreconditionError(absl::StrCat(
        "the new data needs ", (*loaded)->OutputBufferBytes(), "-byte output buffers, more than ",
        "the ", workers_.front()->output_buffer_bytes(),
        " allocated at startup; restart onepassd"));
  }
  if (status.ok() && !workers_.empty() &&
      (*loaded)->MaxRequestBytes() >= workers_.front()->input_buffer_bytes()) {
    status = absl::FailedPreconditionError(absl::StrCat(
        "the new data accepts ", (*loaded)->MaxRequestBytes(), "-byte requests, more than the ",
        workers_.front()->input_buffer_bytes() - 1, " allocated at startup; restart onepassd"));
  }
  // The counts go on in the workers' blocks, by index: the list must be the one they hold.
  if (status.ok() && (*loaded)->Counters().size() != counter_count_) {
    status = absl::InternalError(absl::StrCat("the new ", (*loaded)->Name(), " handler has ",
                                              (*loaded)->Counters().size(), " counters, not ",
                                              counter_count_));
  }
  for (size_t w = 0; status.ok() && w < workers_.size(); ++w) {
    std::unique_ptr<Handler> handler = (*loaded)->CreateHandler(workers_[w]->handler_counters());
    if (handler == nullptr) {
      status = absl::InternalError(
          absl::StrCat("the ", (*loaded)->Name(), " handler could not be created"));
    } else {
      handlers.push_back(std::move(handler));
    }
  }
  if (!status.ok()) {
    reload_failures_.fetch_add(1, std::memory_order_relaxed);
    return status;
  }
  const uint64_t generation = reloads_.fetch_add(1, std::memory_order_relaxed) + 1;
  retired_.push_back({std::move(factory_), generation});
  factory_ = *std::move(loaded);
  counter_specs_.store(factory_->Counters().data(), std::memory_order_release);
  for (size_t w = 0; w < workers_.size(); ++w) {
    workers_[w]->OfferHandler(factory_, std::move(handlers[w]), generation);
  }
  return absl::OkStatus();
}

std::vector<std::shared_ptr<const HandlerFactory>> Server::TakeRetired() {
  std::vector<std::shared_ptr<const HandlerFactory>> released;
  if (retired_.empty()) return released;
  uint64_t all_serve = UINT64_MAX;  // the oldest generation a worker still serves
  for (const auto& worker : workers_) all_serve = std::min(all_serve, worker->serving_generation());
  std::vector<Retired> kept;
  for (Retired& retired : retired_) {
    if (retired.replaced_at <= all_serve) {
      released.push_back(std::move(retired.factory));
    } else {
      kept.push_back(std::move(retired));
    }
  }
  retired_ = std::move(kept);
  return released;
}

StatsSnapshot Server::Stats() const {
  StatsSnapshot total;
  for (const auto& worker : workers_) total += worker->ReadStats();
  total.reloads = reloads_.load(std::memory_order_relaxed);
  total.reload_failures = reload_failures_.load(std::memory_order_relaxed);
  return total;
}

StatsSnapshot Server::StatsOf(int worker) const { return workers_[worker]->ReadStats(); }

std::vector<uint64_t> Server::HandlerCounts() const {
  std::vector<uint64_t> totals(counter_count_, 0);
  for (const auto& worker : workers_) {
    const HandlerCounters& counters = worker->handler_counters();
    for (size_t i = 0; i < totals.size(); ++i) totals[i] += counters.Read(i);
  }
  return totals;
}

std::vector<uint64_t> Server::HandlerCountsOf(int w) const {
  const HandlerCounters& counters = workers_[w]->handler_counters();
  std::vector<uint64_t> counts(counter_count_, 0);
  for (size_t i = 0; i < counts.size(); ++i) counts[i] = counters.Read(i);
  return counts;
}

void Server::ReloadTls(std::shared_ptr<const tls::TlsServerContext> context) {
  if (tls_addresses_.empty() || context == nullptr) return;
  for (const auto& worker : workers_) worker->OfferTls(context);
  std::lock_guard<std::mutex> lock(tls_mutex_);
  tls_context_ = std::move(context);
}

tls::TlsStatsSnapshot Server::TlsStats() const {
  tls::TlsStatsSnapshot total;
  for (const auto& worker : workers_) total += worker->tls_stats().Read();
  return total;
}

std::string Server::FormatStats() const {
  std::string text = Stats().Format();
  if (!tls_addresses_.empty()) absl::StrAppend(&text, " ", TlsStats().Format());
  const std::string handler = FormatCounters(handler_counter_specs(), HandlerCounts());
  if (!handler.empty()) absl::StrAppend(&text, " ", handler);
  if (xdp()) absl::StrAppend(&text, " ", XdpStats().Format());
  return text;
}

}  // namespace onepass
