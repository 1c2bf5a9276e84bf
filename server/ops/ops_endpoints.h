// What the operations listener (server/ops/metrics_server.h) answers:
//   GET /metrics  the Prometheus exposition (server/ops/metrics_format.h), 200
//   GET /healthz  200 "ok" when every worker's loop is alive and the data loaded, else 503 and
//                 the reason (a stuck worker, no data, draining): what a load balancer or the
//                 anycast route announcement polls
//   GET /readyz   200 "serving", or 503 "starting: ..." / "draining ..."
// Runs on the metrics thread; reads the workers' counters with relaxed loads, never a lock a
// worker takes.
#ifndef ONEPASS_SERVER_OPS_OPS_ENDPOINTS_H_
#define ONEPASS_SERVER_OPS_OPS_ENDPOINTS_H_

#include <atomic>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/ops/metrics_format.h"
#include "server/ops/metrics_server.h"
#include "server/ops/server_status.h"
#include "server/server.h"

namespace onepass {

// A worker whose loop has not stamped its heartbeat for this long is reported stuck.
inline constexpr absl::Duration kDefaultHealthStall = absl::Seconds(5);

struct OpsOptions {
  std::string version;
  std::string handler;
  absl::Duration stall_bound = kDefaultHealthStall;
};

class OpsEndpoints {
 public:
  // `status` must outlive this.
  OpsEndpoints(const ServerStatus* status, OpsOptions options)
      : status_(status), options_(std::move(options)) {}

  // The main thread: the server once created (before that, /healthz and /readyz say
  // "starting"), and nullptr before it is destroyed.
  void SetServer(const Server* server) { server_.store(server, std::memory_order_release); }

  // The metrics thread.
  HttpReply Handle(absl::string_view method, absl::string_view path) const;
  MetricsInput ReadMetrics() const;

 private:
  const ServerStatus* status_;
  OpsOptions options_;
  std::atomic<const Server*> server_{nullptr};
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_OPS_OPS_ENDPOINTS_H_
