#include "server/ops/metrics_format.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace onepass {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string EscapeHelp(absl::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  // Integers (counters, serials, timestamps) print exactly; %.17g would too, but reads worse.
  if (value == static_cast<double>(static_cast<int64_t>(value)) && value < 9e15 && value > -9e15) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  return absl::StrFormat("%.9g", value);
}

// Writes families: "# HELP", "# TYPE" once per name, then its samples.
class Exposition {
 public:
  void Family(absl::string_view name, absl::string_view type, absl::string_view help) {
    absl::StrAppend(&text_, "# HELP ", name, " ", EscapeHelp(help), "\n# TYPE ", name, " ", type,
                    "\n");
  }
  void Sample(absl::string_view name, const Labels& labels, double value) {
    Sample(name, labels, FormatValue(value));
  }
  void Sample(absl::string_view name, const Labels& labels, uint64_t value) {
    Sample(name, labels, absl::StrCat(value));
  }
  void Sample(absl::string_view name, const Labels& labels, const std::string& value) {
    absl::StrAppend(&text_, name);
    if (!labels.empty()) {
      text_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        absl::StrAppend(&text_, i == 0 ? "" : ",", labels[i].first, "=\"",
                        EscapeLabelValue(labels[i].second), "\"");
      }
      text_ += '}';
    }
    absl::StrAppend(&text_, " ", value, "\n");
  }
  // A histogram's _bucket (cumulative, `le`), _sum and _count samples.
  void Histogram(absl::string_view name, const Labels& labels, const HistogramSnapshot& h) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.buckets.size(); ++i) {
      cumulative += h.buckets[i];
      Labels with_le = labels;
      with_le.emplace_back(
          "le", i < kLatencyBucketBounds.size() ? FormatValue(kLatencyBucketBounds[i]) : "+Inf");
      Sample(absl::StrCat(name, "_bucket"), with_le, cumulative);
    }
    Sample(absl::StrCat(name, "_sum"), labels, static_cast<double>(h.sum_nanos) * 1e-9);
    Sample(absl::StrCat(name, "_count"), labels, cumulative);
  }
  std::string Take() { return std::move(text_); }

 private:
  std::string text_;
};

Labels WorkerLabels(const WorkerSample& worker) {
  return {{"worker", absl::StrCat(worker.index)},
          {"cpu", worker.cpu >= 0 ? absl::StrCat(worker.cpu) : "none"}};
}

// Counters that are the server's, not a worker's: no per-worker series.
bool IsServerWide(absl::string_view name) { return name == "reloads" || name == "reload_failures"; }

void WriteWorkerCounters(const MetricsInput& input, StatsSnapshot total, Exposition& out) {
  total.reloads = input.reloads;
  total.reload_failures = input.reload_failures;
#define ONEPASS_EXPOSE_COUNTER(name, help)                                                   \
  out.Family("onepass_" #name "_total", "counter", help);                                    \
  out.Sample("onepass_" #name "_total", {}, total.name);                                     \
  if (!IsServerWide(#name)) {                                                                \
    out.Family("onepass_worker_" #name "_total", "counter", help " (per worker)");           \
    for (const WorkerSample& worker : input.workers) {                                       \
      out.Sample("onepass_worker_" #name "_total", WorkerLabels(worker), worker.stats.name); \
    }                                                                                        \
  }
  // Totals are sums of causes: a query sums the causes, so they are not exported twice.
#define ONEPASS_SKIP_TOTAL(name, help, sum)
  ONEPASS_WORKER_COUNTERS(ONEPASS_EXPOSE_COUNTER, ONEPASS_SKIP_TOTAL)
#undef ONEPASS_EXPOSE_COUNTER
#undef ONEPASS_SKIP_TOTAL
}

// The protocol's counters, one family per CounterSpec::family (in order of first appearance),
// summed and per worker; a family's members share its type (counter or gauge) and labels.
void WriteHandlerCounters(const MetricsInput& input, Exposition& out) {
  std::vector<std::string> families;
  std::map<std::string, std::vector<size_t>> members;
  for (size_t i = 0; i < input.handler_specs.size(); ++i) {
    if (!Exported(input.handler_specs[i])) continue;  // a vacant slot
    std::string family(input.handler_specs[i].family);
    if (members.find(family) == members.end()) families.push_back(family);
    members[family].push_back(i);
  }
  for (const std::string& family : families) {
    const std::vector<size_t>& indexes = members[family];
    const CounterSpec& first = input.handler_specs[indexes.front()];
    // One help text when the members share it (one series per backend, say), else the labels.
    bool one_help = true;
    for (size_t i : indexes) one_help = one_help && input.handler_specs[i].help == first.help;
    std::string help = one_help
                           ? std::string(first.help)
                           : absl::StrCat(input.handler, " ", family, " by ", first.scope_label,
                                          first.scope_label.empty() ? "" : " and ", first.label);
    const absl::string_view suffix = first.gauge ? "" : "_total";
    const std::string name = absl::StrCat("onepass_", family, suffix);
    const std::string per_worker = absl::StrCat("onepass_worker_", family, suffix);
    auto labels_of = [&](size_t i, Labels labels) {
      const CounterSpec& spec = input.handler_specs[i];
      if (!spec.scope_label.empty()) labels.emplace_back(spec.scope_label, spec.scope_value);
      if (!spec.label.empty()) labels.emplace_back(spec.label, spec.value);
      return labels;
    };
    const absl::string_view type = first.gauge ? "gauge" : "counter";
    out.Family(name, type, help);
    for (size_t i : indexes) {
      uint64_t sum = 0;
      for (const WorkerSample& worker : input.workers) {
        if (i < worker.handler_counts.size()) sum += worker.handler_counts[i];
      }
      out.Sample(name, labels_of(i, {}), sum);
    }
    out.Family(per_worker, type, absl::StrCat(help, " (per worker)"));
    for (const WorkerSample& worker : input.workers) {
      for (size_t i : indexes) {
        const uint64_t n = i < worker.handler_counts.size() ? worker.handler_counts[i] : 0;
        out.Sample(per_worker, labels_of(i, WorkerLabels(worker)), n);
      }
    }
  }
}

void WriteWorkerMetrics(const MetricsInput& input, Exposition& out) {
  HistogramSnapshot histogram;
  uint64_t parked = 0;
  std::array<uint64_t, static_cast<size_t>(AcceptPauseCause::kCount)> pauses{};
  for (const WorkerSample& worker : input.workers) {
    histogram += worker.metrics.accept_to_close;
    parked += worker.metrics.parked_now;
    for (size_t i = 0; i < pauses.size(); ++i) pauses[i] += worker.metrics.accept_pauses[i];
  }
  constexpr char kDurationHelp[] = "time from accept to close of a connection";
  out.Family("onepass_connection_duration_seconds", "histogram", kDurationHelp);
  out.Histogram("onepass_connection_duration_seconds", {}, histogram);
  out.Family("onepass_worker_connection_duration_seconds", "histogram",
             absl::StrCat(kDurationHelp, " (per worker)"));
  for (const WorkerSample& worker : input.workers) {
    out.Histogram("onepass_worker_connection_duration_seconds", WorkerLabels(worker),
                  worker.metrics.accept_to_close);
  }

  constexpr char kParkedHelp[] = "connections waiting in the event loops now";
  out.Family("onepass_parked_connections", "gauge", kParkedHelp);
  out.Sample("onepass_parked_connections", {}, parked);
  out.Family("onepass_worker_parked_connections", "gauge",
             absl::StrCat(kParkedHelp, " (per worker)"));
  for (const WorkerSample& worker : input.workers) {
    out.Sample("onepass_worker_parked_connections", WorkerLabels(worker),
               worker.metrics.parked_now);
  }

  out.Family("onepass_accept_pauses_by_errno_total", "counter",
             "accepting paused for a second, by the errno of accept");
  for (size_t i = 0; i < pauses.size(); ++i) {
    out.Sample("onepass_accept_pauses_by_errno_total",
               {{"errno", AcceptPauseCauseName(static_cast<AcceptPauseCause>(i))}}, pauses[i]);
  }

  out.Family("onepass_worker_heartbeat_age_seconds", "gauge",
             "time since the worker's event loop last stamped its heartbeat");
  for (const WorkerSample& worker : input.workers) {
    const int64_t age =
        worker.metrics.heartbeat_nanos == 0 ? 0 : input.now_nanos - worker.metrics.heartbeat_nanos;
    out.Sample("onepass_worker_heartbeat_age_seconds", WorkerLabels(worker),
               static_cast<double>(age > 0 ? age : 0) * 1e-9);
  }
}

double UnixSeconds(absl::Time time) {
  return time == absl::InfinitePast() ? 0 : absl::ToDoubleSeconds(time - absl::UnixEpoch());
}

// --tls-listen's handshakes, failures by cause, versions, suites, ALPN, and the credentials in
// use (the certificate's expiry, the ticket key that encrypts).
void WriteTls(const MetricsInput& input, Exposition& out) {
  const tls::TlsStatsSnapshot& tls = input.tls_stats;
  out.Family("onepass_tls_handshakes_total", "counter",
             "TLS handshakes completed, full or resumed from a session ticket");
  out.Sample("onepass_tls_handshakes_total", {{"result", "full"}}, tls.handshakes_full);
  out.Sample("onepass_tls_handshakes_total", {{"result", "resumed"}}, tls.handshakes_resumed);
  out.Family("onepass_tls_failures_total", "counter",
             "TLS sessions that failed (the connection was closed), by cause");
  for (int i = 0; i < tls::kTlsFailureCount; ++i) {
    out.Sample("onepass_tls_failures_total",
               {{"reason", std::string(tls::TlsFailureName(static_cast<tls::TlsFailure>(i + 1)))}},
               tls.failed[i]);
  }
  out.Family("onepass_tls_versions_total", "counter", "completed handshakes by TLS version");
  out.Sample("onepass_tls_versions_total", {{"version", "1.3"}}, tls.tls13);
  out.Sample("onepass_tls_versions_total", {{"version", "1.2"}}, tls.tls12);
  out.Family("onepass_tls_ciphers_total", "counter", "completed handshakes by cipher suite");
  for (int i = 0; i < tls::kTlsCipherCount; ++i) {
    out.Sample("onepass_tls_ciphers_total", {{"suite", std::string(tls::TlsCipherName(i))}},
               tls.cipher[i]);
  }
  out.Family("onepass_tls_alpn_total", "counter",
             "completed handshakes by ALPN: the protocol selected (this server's: \"dot\" for "
             "DNS, \"http/1.1\" for OCSP and RDAP), or none offered");
  // One handler per process, so one protocol: the label says which ("selected" when
  // --tls-alpn lists several).
  const std::vector<std::string>* served =
      input.tls_context != nullptr ? &input.tls_context->config().alpn : nullptr;
  const std::string selected =
      served != nullptr && served->size() == 1 ? served->front() : std::string("selected");
  out.Sample("onepass_tls_alpn_total", {{"alpn", selected}}, tls.alpn_selected);
  out.Sample("onepass_tls_alpn_total", {{"alpn", "none"}}, tls.alpn_absent);
  out.Family("onepass_tls_tickets_unknown_key_total", "counter",
             "session tickets of a key no longer in use (a full handshake instead)");
  out.Sample("onepass_tls_tickets_unknown_key_total", {}, tls.tickets_unknown_key);
  out.Family("onepass_tls_hello_retry_requests_total", "counter",
             "handshakes of the onepass engine that needed a HelloRetryRequest (no key share "
             "on X25519 or P-256)");
  out.Sample("onepass_tls_hello_retry_requests_total", {}, tls.hello_retry_requests);
  out.Family("onepass_tls_handshakes_by_engine_total", "counter",
             "completed handshakes by the engine that served them: the onepass engine itself, "
             "or OpenSSL's (--tls-engine openssl, or what the onepass engine handed over)");
  out.Sample("onepass_tls_handshakes_by_engine_total", {{"engine", "onepass"}},
             tls.handshakes_onepass_engine);
  out.Sample("onepass_tls_handshakes_by_engine_total", {{"engine", "openssl"}},
             tls.handshakes_openssl_engine());
  out.Family("onepass_tls_fallback_total", "counter",
             "ClientHellos the onepass engine handed to the OpenSSL engine, by reason");
  for (int i = 0; i < tls::tls13::kFallbackCount; ++i) {
    out.Sample("onepass_tls_fallback_total",
               {{"reason", tls::tls13::FallbackName(static_cast<tls::tls13::Fallback>(i + 1))}},
               tls.fallback[i]);
  }
  if (input.tls_context == nullptr) return;
  out.Family("onepass_tls_certificate_expiry_timestamp_seconds", "gauge",
             "Unix time the certificate in use expires (notAfter)");
  out.Sample("onepass_tls_certificate_expiry_timestamp_seconds", {},
             UnixSeconds(input.tls_context->not_after()));
  const std::vector<tls::TicketKey>& keys = input.tls_context->ticket_keys();
  out.Family("onepass_tls_ticket_key_info", "gauge",
             "1 for the session ticket key that encrypts (its name's first 4 bytes in hex), "
             "with how many keys decrypt and where they come from");
  std::string name = "random";
  if (!keys.empty()) {
    name.clear();
    for (int i = 0; i < 4; ++i) absl::StrAppend(&name, absl::Hex(keys[0].name[i], absl::kZeroPad2));
  }
  out.Sample("onepass_tls_ticket_key_info",
             {{"name", name},
              {"keys", absl::StrCat(keys.empty() ? 1 : keys.size())},
              {"source", input.tls_context->ticket_keys_from_file() ? "file" : "process"}},
             uint64_t{1});
}

void WriteServerStatus(const MetricsInput& input, Exposition& out) {
  const ServerStatusSnapshot& status = input.status;
  out.Family("onepass_build_info", "gauge", "version and protocol of this onepassd; always 1");
  out.Sample("onepass_build_info", {{"version", input.version}, {"handler", input.handler}},
             uint64_t{1});
  out.Family("onepass_workers", "gauge", "worker threads");
  out.Sample("onepass_workers", {}, static_cast<uint64_t>(input.workers.size()));
  out.Family("onepass_phase", "gauge",
             "1 for the phase the server is in: starting, serving, draining");
  for (ServerPhase phase :
       {ServerPhase::kStarting, ServerPhase::kServing, ServerPhase::kDraining}) {
    out.Sample("onepass_phase", {{"phase", ServerPhaseName(phase)}},
               uint64_t{status.phase == phase ? 1u : 0u});
  }
  out.Family("onepass_data_loaded_timestamp_seconds", "gauge",
             "Unix time the data in service was loaded (0: none yet)");
  out.Sample("onepass_data_loaded_timestamp_seconds", {}, UnixSeconds(status.data_loaded_at));
  out.Family("onepass_data_load_duration_seconds", "gauge",
             "how long loading the data in service took");
  out.Sample("onepass_data_load_duration_seconds", {},
             absl::ToDoubleSeconds(status.data_load_time));
  out.Family("onepass_last_reload_timestamp_seconds", "gauge",
             "Unix time of the last SIGHUP reload (0: none)");
  out.Sample("onepass_last_reload_timestamp_seconds", {}, UnixSeconds(status.last_reload_at));
  out.Family("onepass_last_reload_success", "gauge",
             "1 if the last SIGHUP reload succeeded, 0 if it failed or none happened");
  out.Sample("onepass_last_reload_success", {}, uint64_t{status.last_reload_ok ? 1u : 0u});

  // The protocol's description of its data, one family per name in order of appearance.
  std::vector<std::string> names;
  for (const DataGauge& gauge : status.data) {
    bool seen = false;
    for (const std::string& name : names) seen = seen || name == gauge.name;
    if (!seen) names.push_back(gauge.name);
  }
  for (const std::string& name : names) {
    const std::string full = absl::StrCat("onepass_", name);
    bool first = true;
    for (const DataGauge& gauge : status.data) {
      if (gauge.name != name) continue;
      if (first) out.Family(full, "gauge", gauge.help);
      first = false;
      out.Sample(full, gauge.labels, gauge.value);
    }
  }
}

// --xdp: the AF_XDP path's counters (server/xdp/serve/xdp_counters.h), summed over workers and
// per worker (worker k serves rx queue k of each interface: its series show the steering).
void WriteXdp(const MetricsInput& input, Exposition& out) {
#define ONEPASS_XDP_METRIC(name, help)                                                             \
  out.Family("onepass_xdp_" #name "_total", "counter", "AF_XDP path (--xdp): " help);              \
  out.Sample("onepass_xdp_" #name "_total", {}, input.xdp_stats.name);                             \
  out.Family("onepass_worker_xdp_" #name "_total", "counter",                                      \
             "AF_XDP path (--xdp): " help " (per worker)");                                        \
  for (const WorkerSample& worker : input.workers) {                                               \
    out.Sample("onepass_worker_xdp_" #name "_total", WorkerLabels(worker), worker.xdp_stats.name); \
  }
  ONEPASS_XDP_COUNTERS(ONEPASS_XDP_METRIC)
#undef ONEPASS_XDP_METRIC
}

}  // namespace

std::string EscapeLabelValue(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatMetrics(const MetricsInput& input) {
  Exposition out;
  StatsSnapshot total;
  for (const WorkerSample& worker : input.workers) total += worker.stats;
  WriteWorkerCounters(input, total, out);
  WriteHandlerCounters(input, out);
  WriteWorkerMetrics(input, out);
  WriteServerStatus(input, out);
  if (input.tls) WriteTls(input, out);
  if (input.xdp) WriteXdp(input, out);
  return out.Take();
}

}  // namespace onepass
