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

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/arguments.h"
#include "common/cpu_list.h"
#include "common/data_file.h"
#include "common/flag_help.h"
#include "common/flagfile.h"
#include "common/log.h"
#include "handlers/load_phases.h"
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
#include "server/startup_probe.h"
#include "server/tls_flags.h"

ABSL_FLAG(std::vector<std::string>, listen, {},
          "Address to listen on: ADDR:PORT, or [V6ADDR]:PORT for IPv6 (e.g. 127.0.0.1:53, "
          "[::1]:53; port 0 picks a free port). Repeat the flag, or separate with commas.");
ABSL_FLAG(std::string, handler, "dns", "Protocol to serve (onepassd: dns|ocsp|whois|rdap).");
ABSL_FLAG(int, workers, 0,
          "Worker threads, each with its own listening socket and event loop. 0: one per CPU "
          "in --cpus, or in this process's affinity mask (taskset).");
ABSL_FLAG(std::string, cpus, "",
          "CPUs to pin one worker each to, e.g. 0-3,8. Empty: the affinity mask, in order.");
ABSL_FLAG(std::string, steering, "auto",
          "Which worker accepts a connection: cpu (the one pinned to the CPU that processed its "
          "SYN, via a reuseport BPF program; keeps a connection on its RSS queue's core), hash "
          "(the kernel's 4-tuple hash), auto (cpu when the workers are pinned).");
ABSL_FLAG(std::string, io, "epoll",
          "Worker loop: epoll (libevent) or uring (liburing: accept, the first recv, the last "
          "send and close batched on a ring; --dns-backend's upstreams run on it too; only in a "
          "build with -DONEPASS_IO_URING=ON). "
          "docs/design.md \"One worker core, two I/O drivers\".");
ABSL_FLAG(bool, private_fd_tables, onepass::kPrivateFdTablesByDefault,
          "Give each worker thread a file-descriptor table of its own (unshare(CLONE_FILES)), "
          "so that accept4 and close take no lock shared with the other workers "
          "(docs/design.md \"Private descriptor tables\"). "
          "--private-fd-tables=false shares one table (the default of a ThreadSanitizer build, "
          "whose descriptor tracking assumes one table). Not with --dns-backend (its sockets are "
          "opened before the workers start), which keeps the shared table.");
ABSL_FLAG(int, backlog, onepass::kDefaultBacklog,
          "listen() backlog of each worker's socket (the kernel caps it at "
          "net.core.somaxconn).");
ABSL_FLAG(int, accept_burst, onepass::kDefaultAcceptBurst,
          "Connections a worker accepts per listener wakeup before serving other events.");
ABSL_FLAG(int, max_connections, onepass::kDefaultMaxConnections,
          "Connections that may wait in the event loops at once (incomplete request, full "
          "socket buffer, keepalive), for the whole server, split evenly over the workers. "
          "Beyond it new waiting connections are closed and counted (rejected_pool_full).");
ABSL_FLAG(int, max_connections_per_client, onepass::kDefaultMaxConnectionsPerClient,
          "Connections one client may have waiting in the event loops, for the whole server "
          "(a client: its address cut to --client-prefix-v4/--client-prefix-v6 bits); beyond "
          "it they are closed and counted (rejected_per_client).");
ABSL_FLAG(int, client_prefix_v4, onepass::kDefaultClientPrefixV4,
          "Bits of an IPv4 address that make one client for --max-connections-per-client.");
ABSL_FLAG(int, client_prefix_v6, onepass::kDefaultClientPrefixV6,
          "Bits of an IPv6 address that make one client for --max-connections-per-client "
          "(64: a host owning a /64 has 2^64 addresses).");
ABSL_FLAG(int, read_timeout_ms, absl::ToInt64Milliseconds(onepass::kDefaultReadTimeout),
          "A request must arrive whole within this many ms of accept or of the previous "
          "request; trickling bytes does not extend it (slowloris).");
ABSL_FLAG(int, write_timeout_ms, absl::ToInt64Milliseconds(onepass::kDefaultWriteTimeout),
          "A response the socket could not take at once must be written within this many ms.");
ABSL_FLAG(int, max_connection_ms, absl::ToInt64Milliseconds(onepass::kDefaultMaxConnectionTime),
          "The longest a connection may stay open once it waits in the event loop, however "
          "busy it keeps (a slow reader, a client sending messages that get no answer, a long "
          "keepalive); then it is closed and counted (lifetime_cuts).");
ABSL_FLAG(std::string, handover_socket, "",
          "UNIX socket path for restarts without losing a connection: a new onepassd given the "
          "same path (and the same --listen, --workers, --cpus) takes the listening sockets "
          "of the running one over it (SCM_RIGHTS); the old one then stops accepting, finishes "
          "what it has in flight and exits. Empty: off. See deploy/README.md.");
ABSL_FLAG(int, max_data_file_mb, static_cast<int>(onepass::kDefaultMaxDataFileBytes >> 20),
          "The largest data file (zone and each file it $INCLUDEs, DNSSEC key, Whois "
          "database, OCSP response) loaded at start or on SIGHUP, in MiB; a larger one, or one "
          "that is not a regular file (a FIFO, /dev/zero, a folder), fails to load and a "
          "reload keeps the previous data.");
ABSL_FLAG(int, keepalive_ms, -1,
          "How long a connection may wait idle for its next request after its answers, in ms "
          "(RFC 7766 section 6.2.3; 200 ms while more than half of --max-connections are held; "
          "DNS echoes it as edns-tcp-keepalive to a query that asks, RFC 7828). A client that "
          "sends its next query after reading an answer on the same connection (dnsperf -m "
          "tcp) loses none, as with NSD and Knot. 0: close right after the answers (the single "
          "pass: accept4, recvfrom, sendto, close) for every client. Default (-1) by --handler: "
          "dns 2000, ocsp, rdap and whois 0. See --keepalive-learn.");
ABSL_FLAG(bool, keepalive_learn, true,
          "With --keepalive-ms: each worker remembers, per client address, how its kept-open "
          "connections end. A client that closed its last 16 after one request gets the single "
          "pass (answer, close: no wait for its FIN, the cost of a one-query connection stays "
          "that of the single pass); one connection in 16 is still kept open, and a second "
          "request on it gives the client keepalive again. false (and with --proxy-protocol-from, "
          "where the accepted address is the balancer's): keep every connection open.");
ABSL_FLAG(int, drain_timeout_ms, absl::ToInt64Milliseconds(onepass::kDefaultDrainTimeout),
          "On SIGTERM/SIGINT: stop accepting, then give connections in flight this many ms.");
ABSL_FLAG(int, linger_ms, absl::ToInt64Milliseconds(onepass::kDefaultLinger),
          "After a response that ends a connection while the client may still be sending "
          "(e.g. HTTP 431 before the whole header came), shut down the write side and read and "
          "discard for up to this many ms (64 KiB at most) until the client closes, so that "
          "close() does not reset the connection and destroy the response (nginx "
          "lingering_close). 0: close at once.");

ABSL_FLAG(std::string, metrics_listen, "",
          "ADDR:PORT of the operations listener (e.g. 127.0.0.1:9153; port 0 picks a free one): "
          "GET /metrics (Prometheus text format), /healthz (200 when every worker's loop is "
          "alive and the data loaded, else 503 and why), /readyz (starting vs serving). Served "
          "by its own thread, never a worker: 16 connections at most, each closed 5 s after "
          "accept, and one that finds all 16 taken takes the slot of the oldest still reading "
          "(slow peers cannot keep a health check out). Empty: off. Bind it to a management "
          "address.");
ABSL_FLAG(std::vector<std::string>, proxy_protocol_from, {},
          "CIDR of a TCP load balancer (HAProxy send-proxy-v2, a cloud NLB) whose connections "
          "begin with a PROXY protocol v2 header, e.g. 10.0.0.0/8 or 2001:db8::/32 (repeatable). "
          "The client address in it is the one per-client limits use. Connections from these "
          "addresses without a header, and from others with one, are closed and counted "
          "(rejected_proxy). Empty: off.");
ABSL_FLAG(std::vector<std::string>, allow_from, {},
          "Client prefixes served, comma-separated or repeated, IPv4 and IPv6 (192.0.2.0/24, "
          "2001:db8::/32, 127.0.0.1); others are closed at accept, before any TLS work or "
          "request, and counted (rejected_acl). Behind --proxy-protocol-from it is the "
          "header's client address that is checked. Empty: every client (a frontend of a "
          "recursive resolver is then an open resolver).");
ABSL_FLAG(int, health_stall_ms, absl::ToInt64Milliseconds(onepass::kDefaultHealthStall),
          "/healthz reports a worker stuck (503) when its event loop has not stamped its "
          "heartbeat for this many ms.");

ABSL_FLAG(std::string, log_format, "text",
          "text: '<program>: <level>: <message>' lines (the journal adds the time); json: one "
          "object per line with time, level, program and msg.");
ABSL_FLAG(int, log_burst, 10,
          "Messages of one kind an attack can provoke (accept failures, refused peers) are "
          "logged at most this many times per --log-window-ms; then one line says how many "
          "were suppressed.");
ABSL_FLAG(int, log_window_ms, 60000, "The window of --log-burst, in ms.");

ABSL_FLAG(bool, check, false,
          "Load and check all the data the other flags name (zone files, OCSP responses, Whois "
          "database), print what was loaded and exit 0, or print the errors and exit 1. Opens "
          "no socket, so --listen may be left out (systemd ExecStartPre and ExecReload run "
          "it, like nsd-checkconf).");

#ifndef ONEPASS_VERSION
#define ONEPASS_VERSION "unknown"
#endif

namespace onepass {
namespace {

constexpr char kUsage[] =
    "serves DNS over TCP or TLS, OCSP over HTTP, Whois or RDAP, one pinned worker per CPU.\n"
    "\n"
    "  onepassd --handler dns --listen 127.0.0.1:5300 [--listen [::1]:5300] [flags]\n"
    "\n"
    "Flag names may be written with '-' or '_' (--read-timeout-ms = --read_timeout_ms).\n"
    "List flags (--listen, and the handlers' file lists) may be repeated or comma-separated.\n"
    "--flagfile FILE reads flags from FILE, one --name=value per line, '#' comments\n"
    "(example: deploy/onepassd.flags); flags after it on the command line override it.\n"
    "--tls-listen ADDR:853 --tls-cert FILE --tls-key FILE adds DNS over TLS (RFC 7858).\n"
    "Prints 'listening on ADDR:PORT' per address ('tls listening on' for --tls-listen) and\n"
    "'ready' once bound; on SIGTERM drains and\n"
    "prints 'stats ...'. SIGUSR1 logs the counters. SIGHUP reloads the handler's data from\n"
    "the same flags (zone files, OCSP responses, Whois database) without dropping a\n"
    "connection; if the new data fails to load, the previous data stays in service.\n"
    "With --handover-socket, SIGUSR2 starts the binary at the same path (an upgrade) with the\n"
    "same flags; it takes the listening sockets over and this process drains and exits.";

// Flags shown by --help: the server's and every handler's (--helpfull shows Abseil's too).
bool IsOurFlagFile(absl::string_view file) {
  return absl::StrContains(file, "server/") || absl::StrContains(file, "handlers/");
}

// --help: the server's and the handlers' flags by name, to stdout, exit 0.
// (--helpfull still shows Abseil's listing of every flag.)
void PrintHelp() {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOurFlagFile(flag->Filename())) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::fputs(FormatFlagHelp(absl::StrCat("onepassd: ", kUsage), flags).c_str(), stdout);
}

// --keepalive-ms's default by --handler name (as --tls-alpn's, server/tls_flags.cc): DNS
// keeps connections (RFC 7766 §6.2.3: a client may send its next query after reading an
// answer); Whois closes after its answer (RFC 3912) and the HTTP handlers serve single-shot
// clients, so they keep the single pass.
absl::Duration KeepaliveFor(const std::string& handler) {
  return handler == "dns" ? kDefaultDnsKeepalive : absl::ZeroDuration();
}

absl::StatusOr<ServerConfig> ConfigFromFlags() {
  ServerConfig config;
  config.listen = absl::GetFlag(FLAGS_listen);
  TlsFlagsIntoConfig(config);
  config.workers = absl::GetFlag(FLAGS_workers);
  if (std::string cpus = absl::GetFlag(FLAGS_cpus); !cpus.empty()) {
    absl::StatusOr<std::vector<int>> list = ParseCpuList(cpus);
    if (!list.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--cpus ", cpus, ": ", list.status().message()));
    }
    config.cpus = *list;
  }
  const std::string steering = absl::GetFlag(FLAGS_steering);
  if (steering == "auto") {
    config.steering = Steering::kAuto;
  } else if (steering == "cpu") {
    config.steering = Steering::kCpu;
  } else if (steering == "hash") {
    config.steering = Steering::kHash;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--steering ", steering, ": choose cpu, hash or auto"));
  }
  if (const std::string io = absl::GetFlag(FLAGS_io); io == "epoll") {
    config.io = IoLoop::kEpoll;
  } else if (io == "uring") {
    config.io = IoLoop::kUring;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("--io ", io, ": choose epoll or uring"));
  }
  config.private_fd_tables = absl::GetFlag(FLAGS_private_fd_tables);
  config.backlog = absl::GetFlag(FLAGS_backlog);
  config.accept_burst = absl::GetFlag(FLAGS_accept_burst);
  config.max_connections = absl::GetFlag(FLAGS_max_connections);
  config.max_connections_per_client = absl::GetFlag(FLAGS_max_connections_per_client);
  config.client_prefix_v4 = absl::GetFlag(FLAGS_client_prefix_v4);
  config.client_prefix_v6 = absl::GetFlag(FLAGS_client_prefix_v6);
  config.read_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_read_timeout_ms));
  config.write_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_write_timeout_ms));
  const int keepalive_ms = absl::GetFlag(FLAGS_keepalive_ms);
  config.keepalive = keepalive_ms == -1 ? KeepaliveFor(absl::GetFlag(FLAGS_handler))
                                        : absl::Milliseconds(keepalive_ms);
  config.keepalive_learn = absl::GetFlag(FLAGS_keepalive_learn);
  config.max_connection_time = absl::Milliseconds(absl::GetFlag(FLAGS_max_connection_ms));
  config.drain_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_drain_timeout_ms));
  config.linger = absl::Milliseconds(absl::GetFlag(FLAGS_linger_ms));
  config.proxy_protocol_from = absl::GetFlag(FLAGS_proxy_protocol_from);
  config.allow_from = absl::GetFlag(FLAGS_allow_from);
  return config;
}

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

// The flags, expanded (--flagfile), normalized and parsed, the log settings applied, and the
// server's configuration checked (cheap checks first: a zone may take long to load). Empty
// when --help was asked for and printed.
absl::StatusOr<std::optional<ServerConfig>> ParseFlags(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_helpshort_flags = IsOurFlagFile;
  usage_config.contains_help_flags = IsOurFlagFile;
  // Abseil's own --version names the program and how Abseil was built; ours names the build.
  usage_config.version_string = [] { return std::string("onepassd " ONEPASS_VERSION "\n"); };
  absl::SetFlagsUsageConfig(usage_config);
  absl::StatusOr<std::vector<std::string>> expanded =
      ExpandFlagfiles(std::vector<std::string>(argv, argv + argc));
  if (!expanded.ok()) return expanded.status();
  std::vector<char*> expanded_argv;
  for (std::string& arg : *expanded) expanded_argv.push_back(arg.data());
  std::vector<std::string> args =
      NormalizeArguments(static_cast<int>(expanded_argv.size()), expanded_argv.data());
  if (WantsHelp(args)) {
    PrintHelp();
    return std::nullopt;
  }
  std::vector<char*> cargs;
  for (std::string& arg : args) cargs.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(cargs.size()), cargs.data());
  if (positional.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", positional[1], "'; see onepassd --help"));
  }
  LogFormat log_format = LogFormat::kText;
  if (!ParseLogFormat(absl::GetFlag(FLAGS_log_format), log_format)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-format ", absl::GetFlag(FLAGS_log_format), ": choose text or json"));
  }
  SetLogFormat(log_format);
  if (absl::GetFlag(FLAGS_log_burst) <= 0 || absl::GetFlag(FLAGS_log_window_ms) <= 0) {
    return absl::InvalidArgumentError("--log-burst and --log-window-ms must be positive");
  }
  SetLogRateDefaults(absl::GetFlag(FLAGS_log_burst),
                     absl::Milliseconds(absl::GetFlag(FLAGS_log_window_ms)));
  absl::StatusOr<ServerConfig> config = ConfigFromFlags();
  if (!config.ok()) return config.status();
  absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> tls =
      LoadTlsFromFlags(absl::Now(), absl::GetFlag(FLAGS_handler));
  if (!tls.ok()) return tls.status();
  config->tls = *std::move(tls);
  if (config->tls != nullptr && config->tls_listen.empty() && !absl::GetFlag(FLAGS_check)) {
    LogWarning("--tls-cert is loaded but no --tls-listen is given: nothing is served over TLS");
  }
  if (const int mb = absl::GetFlag(FLAGS_max_data_file_mb); mb > 0) {
    SetMaxDataFileBytes(static_cast<uint64_t>(mb) << 20);
  } else {
    return absl::InvalidArgumentError("--max-data-file-mb must be positive");
  }
  // --check binds nothing, so it needs no --listen: it checks the data (and the other flags).
  if (absl::Status valid = Server::CheckConfig(*config, absl::GetFlag(FLAGS_check)
                                                            ? Server::ListenRequirement::kOptional
                                                            : Server::ListenRequirement::kNeeded);
      !valid.ok()) {
    return valid;
  }
  if (absl::GetFlag(FLAGS_health_stall_ms) <= 0) {
    return absl::InvalidArgumentError("--health-stall-ms must be positive");
  }
  return std::optional<ServerConfig>(*std::move(config));
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
          std::string handler_name)
      : server_(server),
        status_(status),
        make_factory_(make_factory),
        handler_name_(std::move(handler_name)) {}

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
        LoadTlsFromFlags(absl::Now(), handler_name_);
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

int ServerMain(int argc, char** argv, const HandlerFactoryMaker& make_factory) {
  SetLogProgramName("onepassd");
  HoldHangup();
  absl::StatusOr<std::optional<ServerConfig>> parsed = ParseFlags(argc, argv);
  if (!parsed.ok()) return Fail(parsed.status());
  if (!parsed->has_value()) return 0;  // --help
  // Not const: its `tls` (the context at start) goes once the server holds it (below).
  ServerConfig config = **std::move(parsed);
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
    if (config.tls != nullptr) {
      std::printf("%s", config.tls->Summary().c_str());
      for (const std::string& warning : config.tls->warnings()) {
        std::printf("warning: %s\n", warning.c_str());
      }
      std::printf("check: TLS certificate, key and ticket keys OK\n");
    }
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
      Server::Create(config, *std::move(factory), std::move(taken->by_worker));
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
  // The server and its workers hold the context in use; after a reload replaces it, the old
  // certificate's private key is freed once the last connection that began with it ends.
  config.tls.reset();
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

  Reloads reloads(**server, status, make_factory, handler_name);
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
