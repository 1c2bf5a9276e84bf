#include "server/ops/startup_report.h"

#include <sys/resource.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/cpu_list.h"

namespace onepass {
namespace {

std::string FormatGauge(const DataGauge& gauge) {
  std::string labels;
  for (const auto& [key, value] : gauge.labels) {
    absl::StrAppend(&labels, labels.empty() ? "" : ",", key, "=", value);
  }
  // Serials and timestamps are integers: print them whole, not as 2.02611e+09.
  const bool whole = gauge.value == static_cast<double>(static_cast<int64_t>(gauge.value));
  return absl::StrCat(
      gauge.name, labels.empty() ? "" : "{", labels, labels.empty() ? "" : "}", "=",
      whole ? absl::StrCat(static_cast<int64_t>(gauge.value)) : absl::StrCat(gauge.value));
}

// Kernel TLS (kTLS: the kernel encrypts sends once told the keys) exists where the "tls" ULP
// is built in or loadable; /proc/net/tls_stat appears with it. onepassd encrypts in user space
// either way (server/tls/README.md says why): this only says what the kernel could do.
std::string KernelTlsNote() {
  if (access("/proc/net/tls_stat", R_OK) == 0) {
    return "kTLS: the kernel has it (/proc/net/tls_stat); onepassd encrypts in user space";
  }
  return "kTLS: not in this kernel (no /proc/net/tls_stat: CONFIG_TLS off or the tls module "
         "not loaded); onepassd encrypts in user space";
}

std::string FormatLimit(rlim_t value) {
  return value == RLIM_INFINITY ? "unlimited" : absl::StrCat(value);
}

}  // namespace

std::vector<std::string> StartupReport(const Server& server, const ServerConfig& config,
                                       const StartupFacts& facts) {
  std::vector<std::string> lines;
  const WorkerPlacement& place = server.placement();
  lines.push_back(absl::StrCat("version: onepassd ", facts.version, ", --handler ", facts.handler));
  lines.push_back(absl::StrCat(
      "workers: ", server.worker_count(), " on CPUs ",
      place.pinned ? FormatCpuList(place.worker_cpus) : "(not pinned: more workers than CPUs)"));
  std::string why = place.note;
  if (why.empty()) {
    why = place.cpu_steering ? "every worker has its own CPU"
                             : (place.pinned ? "--steering hash" : "workers are not pinned");
  }
  lines.push_back(absl::StrCat(
      "steering: ", place.cpu_steering ? "CPU (reuseport BPF)" : "kernel hash", ", because ", why));
  std::vector<std::string> listeners;
  for (const SocketAddress& address : server.addresses()) listeners.push_back(address.ToString());
  lines.push_back(absl::StrCat(
      "listeners: ", absl::StrJoin(listeners, " "), "; metrics: ",
      facts.metrics_listen.empty() ? "off" : facts.metrics_listen, "; PROXY v2 from: ",
      facts.proxy_protocol_from.empty() ? "nobody"
                                        : absl::StrJoin(facts.proxy_protocol_from, " ")));
  if (!server.tls_addresses().empty()) {
    std::vector<std::string> tls_listeners;
    for (const SocketAddress& address : server.tls_addresses()) {
      tls_listeners.push_back(address.ToString());
    }
    lines.push_back(
        absl::StrCat("TLS listeners: ", absl::StrJoin(tls_listeners, " "), "; ", KernelTlsNote()));
    lines.push_back(absl::StrCat(
        "TLS limits: --tls-max-handshakes ", config.tls_max_handshakes, " --tls-full-per-client ",
        config.tls_full_per_client, " --tls-resumed-per-client ", config.tls_resumed_per_client,
        " --tls-idle-timeout-ms ", absl::ToInt64Milliseconds(config.tls_idle_timeout)));
    if (const auto context = server.tls_context(); context != nullptr) {
      for (absl::string_view line : absl::StrSplit(context->Summary(), '\n', absl::SkipEmpty())) {
        lines.push_back(std::string(line));
      }
    }
  }
  // --xdp: per interface, its mode and the queues served, or why the kernel serves it alone.
  for (const std::string& line : server.xdp_report()) lines.push_back(line);
  std::vector<std::string> data;
  for (const DataGauge& gauge : facts.data) data.push_back(FormatGauge(gauge));
  lines.push_back(absl::StrCat(
      "data: loaded in ", absl::FormatDuration(facts.data_load_time),
      facts.data_load_phases.empty() ? "" : absl::StrCat(" (", facts.data_load_phases, ")"),
      data.empty() ? "" : ": ", absl::StrJoin(data, " ")));
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  lines.push_back(
      absl::StrCat("limits: --max-connections ", config.max_connections,
                   " --max-connections-per-client ", config.max_connections_per_client,
                   " --read-timeout-ms ", absl::ToInt64Milliseconds(config.read_timeout),
                   " --write-timeout-ms ", absl::ToInt64Milliseconds(config.write_timeout),
                   " --keepalive-ms ", absl::ToInt64Milliseconds(config.keepalive), " --backlog ",
                   config.backlog, "; descriptors (RLIMIT_NOFILE) ", FormatLimit(files.rlim_cur),
                   " of ", FormatLimit(files.rlim_max)));
  if (files.rlim_cur != RLIM_INFINITY &&
      files.rlim_cur < static_cast<rlim_t>(config.max_connections) + 64) {
    lines.push_back(absl::StrCat("warning: RLIMIT_NOFILE ", files.rlim_cur,
                                 " is below --max-connections + 64: accepts will pause on "
                                 "EMFILE; raise LimitNOFILE (systemd) or ulimit -n"));
  }
  return lines;
}

}  // namespace onepass
