#include "handlers/dns/frontend_backends.h"

#include <algorithm>
#include <random>

namespace onepass::dns {

FrontendBackends::FrontendBackends(const BackendsConfig& config)
    : config_(config), backends_(config.backends), up_count_(config.backends) {
  std::mt19937_64 random(config.seed);
  for (Backend& backend : backends_) {
    backend.free_ids.resize(65536);
    for (size_t i = 0; i < 65536; ++i) backend.free_ids[i] = static_cast<uint16_t>(i);
    std::shuffle(backend.free_ids.begin(), backend.free_ids.end(), random);
  }
}

int FrontendBackends::Pick() {
  int best = -1;
  const size_t n = backends_.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (rotate_ + k) % n;
    const Backend& backend = backends_[i];
    if (!backend.up || backend.free_ids.empty()) continue;
    if (best < 0 || backend.outstanding < backends_[best].outstanding) best = static_cast<int>(i);
  }
  ++rotate_;  // ties go round
  return best;
}

std::optional<uint16_t> FrontendBackends::Allocate(int backend_index, absl::Time now, bool probe) {
  Backend& backend = backends_[backend_index];
  if (backend.free_ids.empty()) return std::nullopt;
  const uint16_t id = backend.free_ids.back();
  backend.free_ids.pop_back();
  InFlight& entry = backend.table[id];
  entry.used = true;
  entry.probe = probe;
  entry.tcp = false;
  entry.answered_stale = false;
  ++entry.generation;
  ++backend.outstanding;
  ++in_flight_;
  deadlines_.push_back({now + config_.timeout, backend_index, id, entry.generation});
  return id;
}

const InFlight* FrontendBackends::Find(int backend, uint16_t id) const {
  if (backend < 0 || static_cast<size_t>(backend) >= backends_.size()) return nullptr;
  const InFlight& entry = backends_[backend].table[id];
  return entry.used ? &entry : nullptr;
}

void FrontendBackends::Free(int backend_index, uint16_t id) {
  Backend& backend = backends_[backend_index];
  backend.table[id].used = false;
  backend.free_ids.push_back(id);
  --backend.outstanding;
  --in_flight_;
}

bool FrontendBackends::Complete(int backend_index, uint16_t id) {
  Free(backend_index, id);
  Backend& backend = backends_[backend_index];
  backend.consecutive_timeouts = 0;
  if (backend.up) return false;
  backend.up = true;
  ++up_count_;
  return true;
}

std::optional<FrontendBackends::Expired> FrontendBackends::PopExpired(absl::Time now) {
  while (!deadlines_.empty() && deadlines_.front().at <= now) {
    const Deadline deadline = deadlines_.front();
    deadlines_.pop_front();
    Backend& backend = backends_[deadline.backend];
    InFlight& entry = backend.table[deadline.id];
    if (!entry.used || entry.generation != deadline.generation) continue;  // answered
    Expired expired;
    expired.backend = deadline.backend;
    expired.entry = entry;  // a copy: the ID may be reused at once
    Free(deadline.backend, deadline.id);
    if (backend.up && ++backend.consecutive_timeouts >= config_.down_after) {
      backend.up = false;
      --up_count_;
      backend.next_probe = now;  // probe at once
      expired.marked_down = true;
    }
    return expired;
  }
  return std::nullopt;
}

void FrontendBackends::ArmClientTimer(int backend, uint16_t id, absl::Time at) {
  client_timers_.push_back({at, backend, id, backends_[backend].table[id].generation});
}

std::optional<FrontendBackends::Due> FrontendBackends::PopClientTimer(absl::Time now) {
  while (!client_timers_.empty() && client_timers_.front().at <= now) {
    const Deadline timer = client_timers_.front();
    client_timers_.pop_front();
    const InFlight& entry = backends_[timer.backend].table[timer.id];
    if (!entry.used || entry.generation != timer.generation) continue;  // answered
    return Due{timer.backend, timer.id};
  }
  return std::nullopt;
}

int FrontendBackends::DueProbe(absl::Time now) {
  for (size_t i = 0; i < backends_.size(); ++i) {
    Backend& backend = backends_[i];
    if (backend.up || backend.next_probe > now || backend.free_ids.empty()) continue;
    backend.next_probe = now + config_.probe_interval;
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace onepass::dns
