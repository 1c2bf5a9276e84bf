#include "server/worker.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"
#include "common/descriptor_table.h"
#include "common/log.h"
#include "server/drivers/driver_factory.h"
#include "server/upstream/upstream_dispatch.h"

namespace onepass {
namespace {

// Reads (empties) an eventfd.
void Drain(int fd) {
  uint64_t count;
  ssize_t ignored = read(fd, &count, sizeof(count));
  (void)ignored;
}

// Wakes the reader of an eventfd; async-signal-safe.
void Wake(int fd) {
  uint64_t one = 1;
  ssize_t ignored = write(fd, &one, sizeof(one));  // eventfd: never short
  (void)ignored;
}

// This worker's share of a server-wide count, split as --max-connections is (at least 1).
int ShareOf(int whole, double share) { return std::max(1, static_cast<int>(whole * share + 0.5)); }

}  // namespace

const tls::TlsStats Worker::kNoTlsStats;

Worker::Worker(int index, int cpu, std::vector<ScopedFd> listeners,
               std::shared_ptr<const HandlerFactory> factory, const ServerConfig& config,
               std::shared_ptr<const tls::TlsServerContext> tls, const ProxyPolicy& proxy_policy,
               int max_connections, ClientTable* clients, ClientTable* tls_clients)
    : index_(index),
      cpu_(cpu),
      config_(config),
      start_tls_(std::move(tls)),
      proxy_policy_(proxy_policy),
      max_connections_(max_connections),
      clients_(clients),
      tls_clients_(tls_clients),
      factory_(std::move(factory)),
      listeners_(std::move(listeners)) {}

Worker::~Worker() {
  stop_watch_.reset();
  offer_watch_.reset();
  xdp_.clear();
  core_.reset();
  upstream_.reset();
  driver_.reset();
}

absl::Status Worker::Init() {
  stop_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  offer_fd_.Reset(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!stop_fd_.valid() || !offer_fd_.valid()) {
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  absl::StatusOr<std::unique_ptr<IoDriver>> driver =
      MakeDriver(config_.io, &timers_, std::move(listeners_), index_,
                 {.accept_burst = config_.accept_burst, .backlog = config_.backlog});
  if (!driver.ok()) return driver.status();
  driver_ = *std::move(driver);
  SecureListeners secure;
  if (!config_.tls_listen.empty()) {
    // The server-wide TLS limits, split as --max-connections is: this worker's share of them.
    const double share =
        static_cast<double>(max_connections_) / std::max(config_.max_connections, max_connections_);
    const TlsTransportFactory::Limits limits{
        .max_handshakes = ShareOf(config_.tls_max_handshakes, share),
        .handshakes_per_client = config_.tls_handshakes_per_client == 0
                                     ? 0
                                     : ShareOf(config_.tls_handshakes_per_client, share),
        .rates = {.full = config_.tls_full_per_client * share,
                  .resumed = config_.tls_resumed_per_client * share},
        .prefix_v4 = config_.client_prefix_v4,
        .prefix_v6 = config_.client_prefix_v6};
    // The worker alone holds the context in use from now on (a reload's replaces it).
    tls_ = std::make_unique<TlsTransportFactory>(std::move(start_tls_), &limits);
    secure = {.first = static_cast<int>(config_.listen.size()),
              .transports = tls_.get(),
              .keepalive = config_.tls_idle_timeout,
              .clients = tls_clients_};
  }
  core_ = std::make_unique<WorkerCore>(index_, config_, proxy_policy_, max_connections_, clients_,
                                       std::move(factory_), driver_.get(), secure);
  if (tls_ != nullptr) tls_->set_host(core_.get());
  // A drain also waits for the AF_XDP queues' connections (this thread's alone: xdp_ grows only
  // here, or before the thread starts).
  core_->SetDrainHold([this] {
    return std::any_of(xdp_.begin(), xdp_.end(),
                       [](const auto& queue) { return queue->connections() > 0; });
  });
  const std::optional<ForwardingSpec> forwarding = core_->factory().Forwarding();
  if (forwarding.has_value() && !forwarding->upstreams.empty()) {
    // A wrong backend address fails here, before the worker runs.
    absl::StatusOr<std::unique_ptr<UpstreamDispatch>> upstream =
        UpstreamDispatch::Open(driver_.get(), *forwarding, core_->handler(), core_->stats(),
                               core_->clock(), core_->output_buffer_bytes(), core_.get());
    if (!upstream.ok()) return upstream.status();
    upstream_ = *std::move(upstream);
    core_->AttachForwarder(upstream_.get());
  }
  stop_watch_ = std::make_unique<FdWatch>(driver_.get(), [this] { OnStopRequested(); });
  offer_watch_ = std::make_unique<FdWatch>(driver_.get(), [this] { OnOffered(); });
  stop_watch_->Arm(stop_fd_.get(), Interest::kReadable, /*persistent=*/true);
  offer_watch_->Arm(offer_fd_.get(), Interest::kReadable, /*persistent=*/true);
  return core_->Init();
}

void Worker::Run() {
  if (cpu_ >= 0) {
    if (absl::Status pinned = PinCurrentThread(cpu_); !pinned.ok()) {
      LogError("worker %d: cannot pin to CPU %d: %s; its connections lose CPU locality", index_,
               cpu_, pinned.message());
    }
  }
  TakePrivateFdTable();
  {
    std::lock_guard<std::mutex> lock(xdp_mutex_);
    xdp_opened_before_start_ = xdp_.size();
  }
  // Allocated here, after pinning, so that the buffers of the hot path are first touched (and
  // placed, on a NUMA machine) on the worker's own node. The pool grows on this thread too.
  core_->StartOnThread();
  if (absl::Status ran = driver_->Run(); !ran.ok()) {
    // The probe at start passed, so this is rare (memory). The listeners close so that the
    // kernel sends this worker's share of connections to the others.
    LogError(
        "worker %d stops serving: %s; the other workers take its connections (restart "
        "onepassd, or use --io=epoll)",
        index_, ran.message());
    driver_->CloseListeners(/*take_queued=*/false);
  }
  // What this thread opened in its table is closed here, not by ~Worker on the main thread
  // (common/descriptor_table.h): what a drain cut short, then the ring.
  core_->EndOnThread();
  EndXdpOnThread();
  driver_->EndOnThread();
}

void Worker::EndXdpOnThread() {
  // The AF_XDP queues of a hand-over (OfferXdp) were opened on this thread: their sockets are in
  // its table alone. Closed here, their counters kept for the exit line; ~Worker on the main
  // thread would close their numbers in the process's table, which may be other files there.
  std::lock_guard<std::mutex> lock(xdp_mutex_);
  while (xdp_.size() > xdp_opened_before_start_) {
    xdp_closed_ += xdp_.back()->counters().Read();
    xdp_.pop_back();
  }
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
  if (absl::Status unshared = UsePrivateDescriptorTable(); !unshared.ok()) {
    LogWarning(
        "worker %d: %s; the worker shares the process's descriptor table (works, slower on "
        "many cores)",
        index_, unshared.message());
    fd_table_.store(FdTable::kShared, std::memory_order_release);
    return;
  }
  // The copies in this table: the listeners it serves are its own now, the others' go.
  driver_->AdoptListenersIntoThisTable();
  for (int fd : foreign_listeners_) close(fd);
  fd_table_.store(FdTable::kPrivate, std::memory_order_release);
}

absl::StatusOr<int> Worker::ServeXdp(const std::string& ifname, uint32_t queue,
                                     const std::vector<uint16_t>& ports) {
  // The queue's TCP table is bounded on its own, on top of this worker's kernel connections:
  // the worker's share of --max-connections, and --max-connections-per-client per client
  // address in this queue (docs/operations.md "The AF_XDP path").
  absl::StatusOr<std::unique_ptr<xdp::XdpQueue>> opened = xdp::XdpQueue::Open(
      {.ifname = ifname,
       .queue = queue,
       .ports = ports,
       .output_bytes = core_->output_buffer_bytes(),
       .request_bound = core_->input_buffer_bytes(),
       .idle_timeout_ms = static_cast<uint64_t>(absl::ToInt64Milliseconds(config_.read_timeout)),
       .keepalive_ms = static_cast<uint64_t>(
           std::max<int64_t>(0, absl::ToInt64Milliseconds(config_.keepalive))),
       .max_connections = static_cast<size_t>(max_connections_),
       .per_client_max = static_cast<size_t>(std::max(1, config_.max_connections_per_client))},
      driver_.get(), [this]() -> Handler& { return core_->handler(); });
  if (!opened.ok()) return opened.status();
  const int fd = (*opened)->fd();
  if (core_->draining()) (*opened)->BeginDrain([this] { core_->RecheckDrain(); });
  std::lock_guard<std::mutex> lock(xdp_mutex_);
  xdp_.push_back(*std::move(opened));
  return fd;
}

xdp::XdpStatsSnapshot Worker::xdp_stats() const {
  std::lock_guard<std::mutex> lock(xdp_mutex_);
  xdp::XdpStatsSnapshot total = xdp_closed_;
  for (const auto& queue : xdp_) total += queue->counters().Read();
  return total;
}

void Worker::RequestStop() { Wake(stop_fd_.get()); }

void Worker::OnStopRequested() {
  Drain(stop_fd_.get());
  // The AF_XDP queues first: the core's drain ends once they hold no connection either
  // (SetDrainHold in Init), and the XDP program already passes new SYNs to the kernel
  // (Server::RequestStop).
  for (const auto& queue : xdp_) queue->BeginDrain([this] { core_->RecheckDrain(); });
  core_->BeginDrain();
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
  Wake(offer_fd_.get());
}

void Worker::OfferTls(std::shared_ptr<const tls::TlsServerContext> context) {
  std::shared_ptr<const tls::TlsServerContext> unused;  // an offer not taken yet
  {
    std::lock_guard<std::mutex> lock(offer_mutex_);
    unused = std::exchange(offered_tls_, std::move(context));
  }
  Wake(offer_fd_.get());
}

void Worker::OfferXdp(XdpOffer offer) {
  {
    std::lock_guard<std::mutex> lock(offer_mutex_);
    offered_xdp_.push_back(std::move(offer));
  }
  Wake(offer_fd_.get());
}

void Worker::OnOffered() {
  Drain(offer_fd_.get());
  std::unique_ptr<Handler> handler;
  std::shared_ptr<const HandlerFactory> factory;
  std::shared_ptr<const tls::TlsServerContext> tls;
  std::vector<XdpOffer> xdp;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(offer_mutex_);
    handler = std::move(offered_handler_);
    factory = std::move(offered_factory_);
    tls = std::move(offered_tls_);
    xdp = std::exchange(offered_xdp_, {});
    generation = offered_generation_;
  }
  for (XdpOffer& offer : xdp) offer.done(ServeXdp(offer.ifname, offer.queue, offer.ports));
  if (tls != nullptr && tls_ != nullptr) {
    tls_->SwapContext(std::move(tls));
    core_->ReleaseIdleTransports();
  }
  if (handler == nullptr) return;  // taken with an earlier wakeup
  core_->SwapHandler(std::move(factory), std::move(handler));
  serving_generation_.store(generation, std::memory_order_release);
  LogInfo("worker %d: serving reload %d; %d parked connections continue with it", index_,
          generation, core_->parked());
}

}  // namespace onepass
