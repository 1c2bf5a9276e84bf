#include "server/server_main.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
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
#include "common/flag_help.h"
#include "common/log.h"
#include "server/server.h"
#include "server/server_config.h"

ABSL_FLAG(std::vector<std::string>, listen, {},
          "Address to listen on: ADDR:PORT, or [V6ADDR]:PORT for IPv6 (e.g. 127.0.0.1:53, "
          "[::1]:53; port 0 picks a free port). Repeat the flag, or separate with commas.");
ABSL_FLAG(std::string, handler, "dns", "Protocol to serve (onepassd: dns|ocsp|whois).");
ABSL_FLAG(int, workers, 0,
          "Worker threads, each with its own listening socket and event loop. 0: one per CPU "
          "in --cpus, or in this process's affinity mask (taskset).");
ABSL_FLAG(std::string, cpus, "",
          "CPUs to pin one worker each to, e.g. 0-3,8. Empty: the affinity mask, in order.");
ABSL_FLAG(std::string, steering, "auto",
          "Which worker accepts a connection: cpu (the one pinned to the CPU that processed its "
          "SYN, via a reuseport BPF program; keeps a connection on its RSS queue's core), hash "
          "(the kernel's 4-tuple hash), auto (cpu when the workers are pinned).");
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
          "Connections one client address may have waiting in one worker's event loop; "
          "beyond it they are closed and counted (rejected_per_client).");
ABSL_FLAG(int, read_timeout_ms, absl::ToInt64Milliseconds(onepass::kDefaultReadTimeout),
          "A request must arrive whole within this many ms of accept or of the previous "
          "request; trickling bytes does not extend it (slowloris).");
ABSL_FLAG(int, write_timeout_ms, absl::ToInt64Milliseconds(onepass::kDefaultWriteTimeout),
          "A response the socket could not take at once must be written within this many ms.");
ABSL_FLAG(int, keepalive_ms, 0,
          "0: close after the response. N: keep a connection open for more requests for up to "
          "N ms of idleness (RFC 7766 section 6.2.3; DNS echoes it as edns-tcp-keepalive).");
ABSL_FLAG(int, drain_timeout_ms, absl::ToInt64Milliseconds(onepass::kDefaultDrainTimeout),
          "On SIGTERM/SIGINT: stop accepting, then give connections in flight this many ms.");
ABSL_FLAG(int, linger_ms, absl::ToInt64Milliseconds(onepass::kDefaultLinger),
          "After a response that ends a connection while the client may still be sending "
          "(e.g. HTTP 431 before the whole header came), shut down the write side and read and "
          "discard for up to this many ms (64 KiB at most) until the client closes, so that "
          "close() does not reset the connection and destroy the response (nginx "
          "lingering_close). 0: close at once.");

ABSL_FLAG(bool, check, false,
          "Load and check all the data the other flags name (zone files, OCSP responses, Whois "
          "database), print what was loaded and exit 0, or print the errors and exit 1. Opens "
          "no socket (systemd ExecStartPre and ExecReload run it, like nsd-checkconf).");

namespace onepass {
namespace {

constexpr char kUsage[] =
    "serves DNS over TCP, OCSP over HTTP or Whois, one pinned worker per CPU.\n"
    "\n"
    "  onepassd --handler dns --listen 127.0.0.1:5300 [--listen [::1]:5300] [flags]\n"
    "\n"
    "Flag names may be written with '-' or '_' (--read-timeout-ms = --read_timeout_ms).\n"
    "List flags (--listen, and the handlers' file lists) may be repeated or comma-separated.\n"
    "Prints 'listening on ADDR:PORT' per address and 'ready' once bound; on SIGTERM drains and\n"
    "prints 'stats ...'. SIGUSR1 logs the counters. SIGHUP reloads the handler's data from\n"
    "the same flags (zone files, OCSP responses, Whois database) without dropping a\n"
    "connection; if the new data fails to load, the previous data stays in service.";

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

absl::StatusOr<ServerConfig> ConfigFromFlags() {
  ServerConfig config;
  config.listen = absl::GetFlag(FLAGS_listen);
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
  config.backlog = absl::GetFlag(FLAGS_backlog);
  config.accept_burst = absl::GetFlag(FLAGS_accept_burst);
  config.max_connections = absl::GetFlag(FLAGS_max_connections);
  config.max_connections_per_client = absl::GetFlag(FLAGS_max_connections_per_client);
  config.read_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_read_timeout_ms));
  config.write_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_write_timeout_ms));
  config.keepalive = absl::Milliseconds(absl::GetFlag(FLAGS_keepalive_ms));
  config.drain_timeout = absl::Milliseconds(absl::GetFlag(FLAGS_drain_timeout_ms));
  config.linger = absl::Milliseconds(absl::GetFlag(FLAGS_linger_ms));
  return config;
}

int Fail(const absl::Status& status) {
  LogError("%s", status.message());
  return 1;
}

}  // namespace

int ServerMain(int argc, char** argv, const HandlerFactoryMaker& make_factory) {
  SetLogProgramName("onepassd");
  // A reload (systemctl reload: SIGHUP) that arrives while the data is still loading must not
  // kill the process (systemd counts death by SIGHUP as a clean exit: no restart). Held
  // pending from the start, it is taken by sigwait below once serving, and reloads then.
  sigset_t hangup;
  sigemptyset(&hangup);
  sigaddset(&hangup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hangup, nullptr);
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig usage_config;
  usage_config.contains_helpshort_flags = IsOurFlagFile;
  usage_config.contains_help_flags = IsOurFlagFile;
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<std::string> args = NormalizeArguments(argc, argv);
  if (WantsHelp(args)) {
    PrintHelp();
    return 0;
  }
  std::vector<char*> cargs;
  for (std::string& arg : args) cargs.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(cargs.size()), cargs.data());
  if (positional.size() > 1) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("unexpected argument '", positional[1], "'; see onepassd --help")));
  }

  absl::StatusOr<ServerConfig> config = ConfigFromFlags();
  if (!config.ok()) return Fail(config.status());

  const std::string handler_name = absl::GetFlag(FLAGS_handler);
  // Cheap checks first: a zone may take long to load.
  if (absl::Status valid = Server::CheckConfig(*config); !valid.ok()) return Fail(valid);
  absl::StatusOr<std::unique_ptr<HandlerFactory>> factory = make_factory(handler_name);
  if (!factory.ok()) {
    return Fail(absl::Status(factory.status().code(), absl::StrCat("--handler ", handler_name, ": ",
                                                                   factory.status().message())));
  }
  if (absl::GetFlag(FLAGS_check)) {
    // --check: the data loaded as a start would load it; nothing bound, nothing served.
    std::printf("%scheck: %s data OK\n", (*factory)->Summary().c_str(), handler_name.c_str());
    return 0;
  }
  absl::StatusOr<std::unique_ptr<Server>> server = Server::Create(*config, *std::move(factory));
  if (!server.ok()) return Fail(server.status());
  // SIGTERM/SIGINT/SIGUSR1/SIGHUP are blocked in every thread (the workers inherit the mask) and
  // taken by sigwait on this thread only: no handler ever runs, nothing to make
  // async-signal-safe, nothing interrupts a worker. (Before this point, during data loading and
  // binding, SIGTERM simply ends the process: there is nothing to drain.)
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);  // sends use MSG_NOSIGNAL; this covers anything else

  (*server)->Start();

  for (const SocketAddress& address : (*server)->addresses()) {
    std::printf("listening on %s\n", address.ToString().c_str());
  }
  std::printf("ready\n");
  std::fflush(stdout);

  while (true) {
    int signal_number = 0;
    if (sigwait(&signals, &signal_number) != 0) continue;
    if (signal_number == SIGUSR1) {
      LogInfo("stats %s", (*server)->FormatStats());
      continue;
    }
    if (signal_number == SIGHUP) {
      // NSD/Knot/nginx semantics: re-read the data named by the same flags; the workers
      // switch between connections. The load runs here, so the workers never wait for it.
      LogInfo("SIGHUP: reloading %s data", handler_name);
      const absl::Status reloaded = (*server)->Reload(make_factory(handler_name));
      if (reloaded.ok()) {
        LogInfo("reloaded %s data; handed to %d workers", handler_name, (*server)->worker_count());
      } else {
        LogError("reload failed: %s; still serving the previous data", reloaded.message());
      }
      continue;
    }
    LogInfo("%s: draining (up to %s)", signal_number == SIGINT ? "SIGINT" : "SIGTERM",
            absl::FormatDuration(config->drain_timeout));
    break;
  }
  (*server)->RequestStop();
  (*server)->Wait();
  std::printf("stats %s\n", (*server)->FormatStats().c_str());
  std::fflush(stdout);
  return 0;
}

}  // namespace onepass
