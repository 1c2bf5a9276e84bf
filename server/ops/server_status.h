// What the main thread knows about the server as a whole, for the metrics listener: its phase
// (starting, serving, draining), what the loaded data holds, and how the last reload went.
//
// Written by the main thread (start-up, SIGHUP, SIGTERM), read by the metrics thread. A mutex
// guards it: neither side is on the connection path, and each holds it for a copy.
#ifndef ONEPASS_SERVER_OPS_SERVER_STATUS_H_
#define ONEPASS_SERVER_OPS_SERVER_STATUS_H_

#include <mutex>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "handlers/handler_counters.h"

namespace onepass {

enum class ServerPhase {
  kStarting,  // loading data, binding: /readyz says 503 "starting"
  kServing,   // workers running with data
  kDraining,  // SIGTERM/SIGINT: finishing what is in flight; /healthz and /readyz say 503
};
const char* ServerPhaseName(ServerPhase phase);

struct ServerStatusSnapshot {
  ServerPhase phase = ServerPhase::kStarting;
  bool data_loaded = false;
  std::vector<DataGauge> data;  // HandlerFactory::DataGauges of the data in service
  absl::Time data_loaded_at = absl::InfinitePast();
  absl::Duration data_load_time = absl::ZeroDuration();
  // The last SIGHUP reload: when, whether it succeeded, and why not.
  absl::Time last_reload_at = absl::InfinitePast();
  bool last_reload_ok = false;
  std::string last_reload_error;
};

class ServerStatus {
 public:
  void SetPhase(ServerPhase phase);
  // New data in service (at start-up or after a successful reload).
  void SetData(std::vector<DataGauge> data, absl::Time loaded_at, absl::Duration load_time);
  void RecordReload(absl::Time at, bool ok, std::string error);
  ServerStatusSnapshot Read() const;

 private:
  mutable std::mutex mutex_;
  ServerStatusSnapshot status_;  // guarded by mutex_
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_OPS_SERVER_STATUS_H_
