#include "server/ops/ops_endpoints.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "server/ops/health.h"

namespace onepass {

MetricsInput OpsEndpoints::ReadMetrics() const {
  MetricsInput input;
  input.version = options_.version;
  input.handler = options_.handler;
  input.status = status_->Read();
  input.now_nanos = MonotonicNanos();
  const Server* server = server_.load(std::memory_order_acquire);
  if (server == nullptr) return input;
  input.handler_specs = server->handler_counter_specs();
  const StatsSnapshot total = server->Stats();
  input.reloads = total.reloads;
  input.reload_failures = total.reload_failures;
  if (!server->tls_addresses().empty()) {
    input.tls = true;
    input.tls_stats = server->TlsStats();
    input.tls_context = server->tls_context();
  }
  if (server->xdp()) {
    input.xdp = true;
    input.xdp_stats = server->XdpStats();
  }
  for (int w = 0; w < server->worker_count(); ++w) {
    WorkerSample sample;
    sample.index = w;
    sample.cpu = server->WorkerCpu(w);
    sample.stats = server->StatsOf(w);
    sample.handler_counts = server->HandlerCountsOf(w);
    sample.metrics = server->WorkerMetricsOf(w);
    if (input.xdp) sample.xdp_stats = server->XdpStatsOf(w);
    input.workers.push_back(std::move(sample));
  }
  return input;
}

HttpReply OpsEndpoints::Handle(absl::string_view method, absl::string_view path) const {
  if (path == "/metrics") {
    // The content type Prometheus negotiates for the text format.
    return {.status = 200,
            .content_type = "text/plain; version=0.0.4; charset=utf-8",
            .body = FormatMetrics(ReadMetrics())};
  }
  if (path == "/healthz" || path == "/readyz") {
    const ServerStatusSnapshot status = status_->Read();
    std::vector<int64_t> heartbeats;
    if (const Server* server = server_.load(std::memory_order_acquire); server != nullptr) {
      for (int w = 0; w < server->worker_count(); ++w) {
        heartbeats.push_back(server->WorkerMetricsOf(w).heartbeat_nanos);
      }
    }
    const HealthVerdict verdict =
        path == "/healthz" ? CheckHealth(status, heartbeats, MonotonicNanos(), options_.stall_bound)
                           : CheckReady(status, heartbeats, MonotonicNanos(), options_.stall_bound);
    return {.status = verdict.ok ? 200 : 503, .body = absl::StrCat(verdict.reason, "\n")};
  }
  return {.status = 404, .body = "not found; try /metrics, /healthz or /readyz\n"};
}

}  // namespace onepass
