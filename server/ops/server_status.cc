#include "server/ops/server_status.h"

#include <utility>

namespace onepass {

const char* ServerPhaseName(ServerPhase phase) {
  switch (phase) {
    case ServerPhase::kStarting:
      return "starting";
    case ServerPhase::kServing:
      return "serving";
    case ServerPhase::kDraining:
      return "draining";
  }
  return "unknown";
}

void ServerStatus::SetPhase(ServerPhase phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  status_.phase = phase;
}

void ServerStatus::SetData(std::vector<DataGauge> data, absl::Time loaded_at,
                           absl::Duration load_time) {
  std::lock_guard<std::mutex> lock(mutex_);
  status_.data_loaded = true;
  status_.data = std::move(data);
  status_.data_loaded_at = loaded_at;
  status_.data_load_time = load_time;
}

void ServerStatus::RecordReload(absl::Time at, bool ok, std::string error) {
  std::lock_guard<std::mutex> lock(mutex_);
  status_.last_reload_at = at;
  status_.last_reload_ok = ok;
  status_.last_reload_error = std::move(error);
}

ServerStatusSnapshot ServerStatus::Read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

}  // namespace onepass
