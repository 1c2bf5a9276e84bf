#include "server/ops/health.h"

#include "absl/strings/str_cat.h"

namespace onepass {

HealthVerdict CheckHealth(const ServerStatusSnapshot& status, absl::Span<const int64_t> heartbeats,
                          int64_t now, absl::Duration stall_bound) {
  if (status.phase == ServerPhase::kDraining) {
    return {false, "draining after SIGTERM: finishing connections in flight, accepting none"};
  }
  if (status.phase == ServerPhase::kStarting || !status.data_loaded) {
    return {false, "no data loaded yet: starting"};
  }
  if (heartbeats.empty()) return {false, "no workers"};
  const int64_t bound = absl::ToInt64Nanoseconds(stall_bound);
  for (size_t w = 0; w < heartbeats.size(); ++w) {
    if (heartbeats[w] == 0) {
      return {false, absl::StrCat("worker ", w, " has not started its event loop")};
    }
    if (now - heartbeats[w] > bound) {
      return {false, absl::StrCat("worker ", w, " is stuck: no heartbeat for ",
                                  absl::FormatDuration(absl::Nanoseconds(now - heartbeats[w])),
                                  " (bound ", absl::FormatDuration(stall_bound), ")")};
    }
  }
  return {true, "ok"};
}

HealthVerdict CheckReady(const ServerStatusSnapshot& status, absl::Span<const int64_t> heartbeats,
                         int64_t now, absl::Duration stall_bound) {
  switch (status.phase) {
    case ServerPhase::kStarting:
      return {false, "starting: loading data and binding listeners"};
    case ServerPhase::kDraining:
      return {false, "draining after SIGTERM"};
    case ServerPhase::kServing:
      break;
  }
  HealthVerdict health = CheckHealth(status, heartbeats, now, stall_bound);
  if (health.ok) health.reason = "serving";
  return health;
}

}  // namespace onepass
