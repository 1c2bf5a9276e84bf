// The Prometheus text exposition format (version 0.0.4) of the server's numbers: what
// GET /metrics on --metrics-listen returns. Pure: from values read elsewhere to text, so the
// names, labels and escaping are tested without a server (tests/unit/server/).
//
// Conventions (https://prometheus.io/docs/practices/naming/): every name starts with
// `onepass_`, counters end in `_total`, times are in seconds. Each worker counter appears
// twice: summed over the workers (`onepass_accepted_total`) and per worker
// (`onepass_worker_accepted_total{worker="0",cpu="2"}`), so a dashboard needs no sum() and a
// worker that lags behind its peers still shows.
#ifndef ONEPASS_SERVER_OPS_METRICS_FORMAT_H_
#define ONEPASS_SERVER_OPS_METRICS_FORMAT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/handler_counters.h"
#include "server/core/stats.h"
#include "server/core/worker_metrics.h"
#include "server/ops/server_status.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_stats.h"
#include "server/xdp/serve/xdp_counters.h"

namespace onepass {

// One worker's numbers, read at one moment.
struct WorkerSample {
  int index = 0;
  int cpu = -1;  // -1: not pinned
  StatsSnapshot stats;
  std::vector<uint64_t> handler_counts;  // by index of MetricsInput::handler_specs
  WorkerMetricsSnapshot metrics;
  xdp::XdpStatsSnapshot xdp_stats;  // its AF_XDP queues' (with MetricsInput::xdp)
};

struct MetricsInput {
  std::string version;
  std::string handler;  // --handler
  std::vector<WorkerSample> workers;
  absl::Span<const CounterSpec> handler_specs;
  // Server-wide counters (not per worker).
  uint64_t reloads = 0;
  uint64_t reload_failures = 0;
  ServerStatusSnapshot status;
  // --tls-listen: the TLS counters summed over workers, and the context new connections get.
  bool tls = false;
  tls::TlsStatsSnapshot tls_stats;
  std::shared_ptr<const tls::TlsServerContext> tls_context;
  int64_t now_nanos = 0;  // MonotonicNanos() when read: the heartbeats' age
  // --xdp: the AF_XDP path's counters summed over workers.
  bool xdp = false;
  xdp::XdpStatsSnapshot xdp_stats;
};

// The whole exposition, ending in a newline.
std::string FormatMetrics(const MetricsInput& input);

// Escapes a label value (backslash, double quote, newline) as the format requires.
std::string EscapeLabelValue(absl::string_view value);

}  // namespace onepass

#endif  // ONEPASS_SERVER_OPS_METRICS_FORMAT_H_
