#include "server/server_main.h"

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/data_file.h"
#include "common/log.h"
#include "handlers/load_phases.h"
#include "server/build_version.h"  // generated: ONEPASS_VERSION
#include "server/ops/metrics_server.h"
#include "server/ops/ops_endpoints.h"
#include "server/ops/server_status.h"
#include "server/ops/startup_report.h"
#include "server/restart/background_loader.h"
#include "server/restart/data_releaser.h"
#include "server/restart/listener_handover.h"
#include "server/restart/successor.h"
#include "server/server.h"
#include "server/server_config.h"
#include "server/server_flags.h"
#include "server/startup_probe.h"
#include "server/tls_flags.h"
#include "server/xdp_flags.h"

namespace onepass {
namespace {

int Fail(const absl::Status& status) {
  LogError("%s", status.message());
  return 1;
}

// SIGHUP must not kill the process while the data is still loading (systemd counts death by
// SIGHUP as a clean exit: no restart). Held pending from the start, it is taken by the signal
// loop once serving, and reloads then.
void HoldHangup() {
  sigset_t hangup;
  sigemptyset(&hangup);
  sigaddset(&hangup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hangup, nullptr);
}

// --metrics-listen, started; null without the flag (or with --check, which binds nothing: the
// running server holds the metrics port while systemd checks the data before a reload).
absl::StatusOr<std::unique_ptr<MetricsServer>> StartMetrics(OpsEndpoints& ops) {
  const std::string listen = absl::GetFlag(FLAGS_metrics_listen);
  if (listen.empty() || absl::GetFlag(FLAGS_check)) return nullptr;
  absl::StatusOr<SocketAddress> address =
      ParseSocketAddress(listen, {.what = "--metrics-listen address"});
  if (!address.ok()) return address.status();
  absl::StatusOr<std::unique_ptr<MetricsServer>> created =
      MetricsServer::Create(*address, [&ops](absl::string_view method, absl::string_view path) {
        return ops.Handle(method, path);
      });
  if (!created.ok()) return created.status();
  (*created)->Start();
  return created;
}

// M_TRIM_THRESHOLD for the whole run (LoadData): freed memory at the top of
// the main arena is kept up to this much instead of being returned at once.
constexpr int kLoadTrimThresholdBytes = 256 << 20;

// The data, loaded as --handler says; errors name the handler.
absl::StatusOr<std::unique_ptr<HandlerFactory>> LoadData(const HandlerFactoryMaker& make_factory,
                                                         const std::string& handler_name) {
  // Loaders allocate and free large temporaries record by record (ldns's parser, for the types
  // the zone reader leaves to it). At glibc's default trim threshold (128 KiB) the main arena
  // gives its top back and takes it again for each: 420,409 brk calls and 1.5 s of system time
  // to load a signed 100k-name zone (strace -c). A high threshold keeps the top while loading;
  // malloc_trim after the load returns what is free (and ~ZoneSnapshot trims after a reload).
  mallopt(M_TRIM_THRESHOLD, kLoadTrimThresholdBytes);
  absl::StatusOr<std::unique_ptr<HandlerFactory>> factory = make_factory(handler_name);
  if (!factory.ok()) {
    return absl::Status(factory.status().code(),
                        absl::StrCat("--handler ", handler_name, ": ", factory.status().message()));
  }
  return factory;
}

// The listening sockets of a running server at --handover-socket, if one is there (after our
// data loaded: it keeps serving meanwhile); none without the flag or without such a server.
absl::StatusOr<TakenListeners> TakeOverListeners(const std::string& handover_path) {
  if (handover_path.empty()) return TakenListeners();
  absl::StatusOr<TakenListeners> took = TakeListeners(handover_path);
  if (took.ok()) {
    LogInfo("took over the listening sockets of the server at %s (this is pid %d)", handover_path,
            getpid());
    return took;
  }
  if (absl::IsNotFound(took.status())) return TakenListeners();
  return took.status();
}

// SIGTERM/SIGINT/SIGUSR1/SIGHUP/SIGUSR2 are blocked in every thread (the workers inherit the
// mask) and taken by sigwait on the main thread only: no handler ever runs, nothing to make
// async-signal-safe, nothing interrupts a worker. (Before this, during data loading and
// binding, SIGTERM simply ends the process: there is nothing to drain.)
sigset_t BlockServingSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGHUP);
  sigaddset(&signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // sends use MSG_NOSIGNAL; this covers anything else
  return signals;
}

// SIGHUP's reloads: the load on its own thread (server/restart/background_loader.h: a load
// stuck on its files must not keep SIGTERM from stopping the server), the swap into the
// workers, and the release of the data they let go of. A SIGHUP during a load asks for one
// more afterwards (the files may have changed again).
class Reloads {
 public:
  Reloads(Server& server, ServerStatus& status, const HandlerFactoryMaker& make_factory,
          std::string handler_name, std::vector<std::string> default_alpn)
      : server_(server),
        status_(status),
        make_factory_(make_factory),
        handler_name_(std::move(handler_name)),
        default_alpn_(std::move(default_alpn)) {}

  // SIGHUP.
  void Request() {
    if (loader_.busy()) {
      again_ = true;
    } else {
      Start();
    }
  }
  // Whether the signal loop must poll (a load under way, or data waiting to be released).
  bool busy() const { return loader_.busy() || server_.retiring(); }
  // Between signals while busy: releases retired data and swaps in a finished load.
  void Poll() {
    releaser_.Release(server_.TakeRetired());
    std::optional<LoadResult> loaded = loader_.Take();
    if (!loaded.has_value()) return;
    // NSD/Knot/nginx semantics: the data named by the same flags; the workers switch between
    // connections, never waiting for the load.
    const absl::Duration reload_time = absl::Now() - start_;
    std::vector<DataGauge> reloaded_data;
    std::vector<LoadPhase> phases;
    if (loaded->ok()) {
      reloaded_data = (**loaded)->DataGauges();
      phases = (**loaded)->LoadPhases();
    }
    const absl::Time swap_start = absl::Now();
    const absl::Status reloaded = server_.Reload(*std::move(loaded));
    const absl::Duration swap_time = absl::Now() - swap_start;
    phases.push_back({"swap", swap_time, swap_time, absl::ZeroDuration()});
    // The SIGHUP failed as a whole when its TLS half did, even if the data went in: the
    // reload metrics and /healthz say so until a SIGHUP that loads both (docs/operations.md).
    if (!tls_error_.empty()) {
      status_.RecordReload(
          start_, false,
          reloaded.ok() ? tls_error_ : absl::StrCat(tls_error_, "; ", reloaded.message()));
    } else {
      status_.RecordReload(start_, reloaded.ok(), std::string(reloaded.message()));
    }
    if (reloaded.ok()) {
      status_.SetData(std::move(reloaded_data), start_ + reload_time, reload_time);
      LogInfo("reloaded %s data in %s (%s); handed to %d workers", handler_name_,
              absl::FormatDuration(absl::Now() - start_), FormatLoadPhases(phases),
              server_.worker_count());
    } else {
      LogError("reload failed: %s; still serving the previous data", reloaded.message());
    }
    if (std::exchange(again_, false)) Start();
  }
  // At exit: a load blocked in its files (a FIFO, a hung network mount) cannot be
  // interrupted; the process must then exit without the destructors its thread might reach.
  bool stuck() { return loader_.busy() && !loader_.Take().has_value(); }

 private:
  void Start() {
    ReloadTls();
    LogInfo("SIGHUP: reloading %s data", handler_name_);
    start_ = absl::Now();
    loader_.Start([this] { return make_factory_(handler_name_); });
  }

  // The certificate, key and ticket keys, read again from the same flags (small files, read
  // here, before the data: a renewed certificate is served at once); a bad one keeps the old.
  void ReloadTls() {
    if (server_.tls_addresses().empty()) return;
    absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> context =
        LoadTlsFromFlags(absl::Now(), default_alpn_);
    if (context.ok() && *context == nullptr) {
      context = absl::FailedPreconditionError("no --tls-cert");  // flags do not change; defensive
    }
    tls_error_.clear();
    if (!context.ok()) {
      LogError("TLS reload failed: %s; still serving the previous certificate and keys",
               context.status().message());
      tls_error_ = absl::StrCat("TLS reload failed: ", context.status().message());
      server_.CountFailedReload();
      return;
    }
    server_.ReloadTls(*std::move(context));
    LogInfo("SIGHUP: TLS certificate, key and ticket keys reloaded; new connections use them");
  }

  Server& server_;
  ServerStatus& status_;
  const HandlerFactoryMaker& make_factory_;
  const std::string handler_name_;
  const std::vector<std::string> default_alpn_;  // --tls-alpn's (ProtocolDefaults::alpn)
  BackgroundLoader loader_;
  // Declared after nothing that its thread reads; joined before the server goes.
  DataReleaser releaser_;
  bool again_ = false;
  absl::Time start_;
  // What the SIGHUP's TLS reload said when it failed; empty when it loaded.
  std::string tls_error_;
};

// Takes signals until SIGTERM or SIGINT: SIGHUP reloads, SIGUSR1 logs the counters, SIGUSR2
// starts a successor (with --handover-socket). Returns the signal that ends it.
int RunSignalLoop(const sigset_t& signals, Server& server, Reloads& reloads,
                  const HandoverServer* handover, const std::vector<std::string>& successor) {
  while (true) {
    int signal_number = 0;
    if (reloads.busy()) {
      // Poll for the load, and for the workers to let go of the data a reload replaced,
      // between signals: at most 10 ms between the end of a load and the workers getting the
      // new data, for 100 wakeups a second while a reload is under way.
      const timespec poll = {.tv_sec = 0, .tv_nsec = 10 * 1000 * 1000};
      signal_number = sigtimedwait(&signals, nullptr, &poll);
      reloads.Poll();
      if (signal_number <= 0) continue;
    } else if (sigwait(&signals, &signal_number) != 0) {
      continue;
    }
    switch (signal_number) {
      case SIGUSR2:
        // A binary upgrade (deploy/README.md): the successor takes over, then we drain.
        if (handover == nullptr) {
          LogWarning("SIGUSR2 ignored: a successor needs --handover-socket to take over");
        } else if (absl::Status spawned = SpawnSuccessor(successor); !spawned.ok()) {
          LogError("%s; still serving", spawned.message());
        }
        break;
      case SIGUSR1:
        LogInfo("stats %s", server.FormatStats());
        break;
      case SIGHUP:
        reloads.Request();
        break;
      default:
        return signal_number;
    }
  }
}

}  // namespace

int ServerMain(int argc, char** argv, const HandlerFactoryMaker& make_factory,
               const ProtocolDefaultsMaker& defaults_of) {
  SetLogProgramName("onepassd");
  HoldHangup();
  absl::StatusOr<std::optional<Parsed>> parsed = ParseFlags(argc, argv, defaults_of);
  if (!parsed.ok()) return Fail(parsed.status());
  if (!parsed->has_value()) return 0;  // --help
  const ServerConfig config = std::move((*parsed)->config);
  // The context at start, until the server holds it (below).
  std::shared_ptr<const tls::TlsServerContext> tls = std::move((*parsed)->tls);
  const std::vector<std::string> successor = SuccessorCommand(argc, argv);
  const std::string handler_name = absl::GetFlag(FLAGS_handler);

  // The operations listener comes up first, so that /readyz says "starting" while the data
  // loads (server/ops/ops_endpoints.h).
  ServerStatus status;
  OpsEndpoints ops(&status,
                   {.version = ONEPASS_VERSION,
                    .handler = handler_name,
                    .stall_bound = absl::Milliseconds(absl::GetFlag(FLAGS_health_stall_ms))});
  absl::StatusOr<std::unique_ptr<MetricsServer>> started_metrics = StartMetrics(ops);
  if (!started_metrics.ok()) return Fail(started_metrics.status());
  std::unique_ptr<MetricsServer> metrics = *std::move(started_metrics);

  const absl::Time load_start = absl::Now();
  absl::StatusOr<std::unique_ptr<HandlerFactory>> factory = LoadData(make_factory, handler_name);
  if (!factory.ok()) return Fail(factory.status());
  // Refused before the probes and --check's OK, as Server::Create refuses it.
  if (absl::Status xdp = Server::CheckXdpHandler(config, **factory); !xdp.ok()) return Fail(xdp);
  const absl::Duration load_time = absl::Now() - load_start;
  // Serving every client, a forwarding handler asks its upstreams whether that is safe (the
  // DNS frontend: a backend that recurses makes us an open resolver); 500 ms at most.
  const std::vector<std::string> probe_warnings =
      config.allow_from.empty() ? RunStartupProbes((*factory)->StartupProbes())
                                : std::vector<std::string>();
  if (absl::GetFlag(FLAGS_check)) {
    // --check: the data loaded as a start would load it; nothing bound, nothing served.
    std::printf("%scheck: %s data OK\n", (*factory)->Summary().c_str(), handler_name.c_str());
    for (const std::string& warning : probe_warnings) std::printf("warning: %s\n", warning.c_str());
    if (tls != nullptr) {
      std::printf("%s\n", tls->Summary().c_str());  // its lines, the last unterminated
      for (const std::string& warning : tls->warnings()) {
        std::printf("warning: %s\n", warning.c_str());
      }
      std::printf("check: TLS certificate, key and ticket keys OK\n");
    }
    for (const std::string& line : CheckXdp(config)) std::printf("%s\n", line.c_str());
    return 0;
  }
  for (const std::string& warning : probe_warnings) LogWarning("%s", warning);
  malloc_trim(0);
  const std::string load_phases = FormatLoadPhases((*factory)->LoadPhases());
  std::vector<DataGauge> data = (*factory)->DataGauges();
  const std::string handover_path = absl::GetFlag(FLAGS_handover_socket);
  absl::StatusOr<TakenListeners> taken = TakeOverListeners(handover_path);
  if (!taken.ok()) return Fail(taken.status());
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(config, *std::move(factory), std::move(tls), std::move(taken->by_worker));
  if (!server.ok()) return Fail(server.status());
  // Whatever way ServerMain returns from here, the metrics thread stops reading the server
  // before the server goes.
  struct MetricsStopper {
    std::unique_ptr<MetricsServer>& metrics;
    OpsEndpoints& ops;
    ~MetricsStopper() {
      if (metrics != nullptr) metrics->Stop();
      ops.SetServer(nullptr);
    }
  } metrics_stopper{metrics, ops};
  ops.SetServer(server->get());
  const sigset_t signals = BlockServingSignals();

  std::vector<std::vector<ScopedFd>> dups;
  if (!handover_path.empty()) dups = (*server)->DupListeners();
  (*server)->Start();
  const StartupFacts facts{
      .version = ONEPASS_VERSION,
      .handler = handler_name,
      .metrics_listen = metrics != nullptr ? metrics->address().ToString() : "",
      .proxy_protocol_from = config.proxy_protocol_from,
      .data_load_time = load_time,
      .data_load_phases = load_phases,
      .data = data};
  status.SetData(std::move(data), load_start + load_time, load_time);
  status.SetPhase(ServerPhase::kServing);
  for (const std::string& line : StartupReport(**server, config, facts)) {
    LogInfo("start-up: %s", line);
  }
  std::unique_ptr<HandoverServer> handover;
  if (!handover_path.empty()) {
    if (taken->connection.valid()) {
      // Our workers accept now: the old server may stop.
      // Under systemd we become the service's main process before the old one exits.
      NotifyServiceManagerOfMainPid();
      if (absl::Status confirmed = ConfirmHandover(taken->connection); !confirmed.ok()) {
        LogWarning("%s", confirmed.message());
      }
    }
    // The hand-over ends in a SIGTERM to ourselves: the drain of a plain stop.
    absl::StatusOr<std::unique_ptr<HandoverServer>> started =
        HandoverServer::Start(handover_path, std::move(dups), [] { kill(getpid(), SIGTERM); });
    if (!started.ok()) {
      (*server)->RequestStop();
      (*server)->Wait();
      return Fail(started.status());
    }
    handover = *std::move(started);
  }

  for (const SocketAddress& address : (*server)->addresses()) {
    std::printf("listening on %s\n", address.ToString().c_str());
  }
  for (const SocketAddress& address : (*server)->tls_addresses()) {
    std::printf("tls listening on %s\n", address.ToString().c_str());
  }
  // The tests' contract (tests/support/server_process.h): the metrics address before "ready".
  if (metrics != nullptr) std::printf("metrics on %s\n", metrics->address().ToString().c_str());
  std::printf("ready\n");
  std::fflush(stdout);

  Reloads reloads(**server, status, make_factory, handler_name, defaults_of(handler_name).alpn);
  const int stop = RunSignalLoop(signals, **server, reloads, handover.get(), successor);
  LogInfo("%s: draining (up to %s)", stop == SIGINT ? "SIGINT" : "SIGTERM",
          absl::FormatDuration(config.drain_timeout));
  status.SetPhase(ServerPhase::kDraining);
  // Our dups of the listening sockets go first: a plain stop takes them out of the group.
  handover.reset();
  (*server)->RequestStop();
  (*server)->Wait();
  std::printf("stats %s\n", (*server)->FormatStats().c_str());
  std::fflush(stdout);
  if (reloads.stuck()) {
    // Blocked in its files and impossible to interrupt: exit without running destructors
    // that the loading thread might still reach.
    LogWarning(
        "a reload was still loading (a data file that blocks: a FIFO, a hung network "
        "mount?); exiting without it");
    std::fflush(stderr);
    _exit(0);
  }
  return 0;
}

}  // namespace onepass
