#include "server/server_flags.h"

#include <algorithm>
#include <cstdio>
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
#include "server/build_version.h"  // generated: ONEPASS_VERSION
#include "server/ops/ops_endpoints.h"
#include "server/server.h"
#include "server/tls_flags.h"
#include "server/xdp_flags.h"

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
ABSL_FLAG(int, accept_burst, 0,
          "With --io=epoll, connections a worker accepts per listener wakeup before serving "
          "other events (0: 64); with --io=uring, accepts armed at once per listener (0: 16, "
          "which measured cheaper per connection than 64).");
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

// `defaults`: the protocol's (--handler), for the flags whose default is its.
absl::StatusOr<ServerConfig> ConfigFromFlags(const ProtocolDefaults& defaults) {
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
  config.keepalive = keepalive_ms == -1 ? defaults.keepalive : absl::Milliseconds(keepalive_ms);
  config.keepalive_learn = absl::GetFlag(FLAGS_keepalive_learn);
  config.max_connection_time = absl::Milliseconds(absl::GetFlag(FLAGS_max_connection_ms));
  config.drain_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_drain_timeout_ms));
  config.linger = absl::Milliseconds(absl::GetFlag(FLAGS_linger_ms));
  config.proxy_protocol_from = absl::GetFlag(FLAGS_proxy_protocol_from);
  config.allow_from = absl::GetFlag(FLAGS_allow_from);
  if (absl::Status xdp = XdpFlagsIntoConfig(config); !xdp.ok()) return xdp;
  return config;
}

}  // namespace

absl::StatusOr<std::optional<Parsed>> ParseFlags(int argc, char** argv,
                                                 const ProtocolDefaultsMaker& defaults_of) {
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
  const ProtocolDefaults defaults = defaults_of(absl::GetFlag(FLAGS_handler));
  absl::StatusOr<ServerConfig> config = ConfigFromFlags(defaults);
  if (!config.ok()) return config.status();
  absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> tls =
      LoadTlsFromFlags(absl::Now(), defaults.alpn);
  if (!tls.ok()) return tls.status();
  if (*tls != nullptr && config->tls_listen.empty() && !absl::GetFlag(FLAGS_check)) {
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
  if (!config->tls_listen.empty() && *tls == nullptr) return Server::MissingTlsContext();
  return std::optional<Parsed>(Parsed{*std::move(config), *std::move(tls)});
}

}  // namespace onepass
