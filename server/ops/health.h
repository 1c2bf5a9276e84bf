// /healthz and /readyz: whether a load balancer or an anycast route announcement should send
// traffic here. Pure: from the status and the workers' heartbeats to a verdict.
//
// Liveness (/healthz) needs every worker's event loop to have stamped its heartbeat
// (server/core/worker_metrics.h) within `stall_bound`, the data loaded, and no drain under way.
// Readiness (/readyz) tells "starting/loading" apart from "serving".
#ifndef ONEPASS_SERVER_OPS_HEALTH_H_
#define ONEPASS_SERVER_OPS_HEALTH_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/ops/server_status.h"

namespace onepass {

struct HealthVerdict {
  bool ok = false;
  std::string reason;  // one line: "ok", or what is wrong and what it means
};

// `heartbeats`: each worker's last stamp (MonotonicNanos, 0: its loop never ran); `now` the same
// clock.
HealthVerdict CheckHealth(const ServerStatusSnapshot& status, absl::Span<const int64_t> heartbeats,
                          int64_t now, absl::Duration stall_bound);
HealthVerdict CheckReady(const ServerStatusSnapshot& status, absl::Span<const int64_t> heartbeats,
                         int64_t now, absl::Duration stall_bound);

}  // namespace onepass

#endif  // ONEPASS_SERVER_OPS_HEALTH_H_
