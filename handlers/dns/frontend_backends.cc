#include "handlers/dns/frontend_backends.h"

#include <utility>

namespace onepass::dns {

FrontendBackends::FrontendBackends(const BackendsConfig& config)
    : config_(config), backends_(config.backends) {
  for (size_t slot = 0; slot < backends_.size(); ++slot) {
    Backend& backend = backends_[slot];
    if (!config.present.empty() && !config.present[slot]) {
      backend.up = false;  // vacant: never picked, never probed (no free ID)
      continue;
    }
    backend.table.resize(65536);
    backend.free_ids.resize(65536);
    for (size_t i = 0; i < 65536; ++i) backend.free_ids[i] = static_cast<uint16_t>(i);
    ++up_count_;
  }
}

void FrontendBackends::MoveDeadlines(std::deque<Deadline>& fifo, const std::vector<bool>& moved,
                                     std::deque<Deadline>& into) {
  std::deque<Deadline> kept;
  for (const Deadline& deadline : fifo) {
    (moved[deadline.backend] ? into : kept).push_back(deadline);
  }
  fifo = std::move(kept);
}

void FrontendBackends::TakeOverFrom(FrontendBackends& old, const std::vector<bool>& keep) {
  std::vector<bool> moved(old.backends_.size(), false);
  for (size_t slot = 0; slot < backends_.size() && slot < old.backends_.size(); ++slot) {
    if (slot >= keep.size() || !keep[slot] || !present(slot) || !old.present(slot)) continue;
    moved[slot] = true;
    Backend& taken = backends_[slot];
    if (taken.up) --up_count_;
    taken = std::move(old.backends_[slot]);
    if (taken.up) ++up_count_;
    in_flight_ += taken.outstanding;
    old.in_flight_ -= taken.outstanding;
    if (taken.up) --old.up_count_;
    Backend& left = old.backends_[slot];  // vacant now: its queries went with the table
    left = Backend();
    left.up = false;
  }
  // A fresh instance has no deadlines yet: the moved ones keep their order.
  MoveDeadlines(old.deadlines_, moved, deadlines_);
  MoveDeadlines(old.udp_deadlines_, moved, udp_deadlines_);
  MoveDeadlines(old.client_timers_, moved, client_timers_);
}

int FrontendBackends::Pick() {
  int best = -1;
  const size_t n = backends_.size();
  for (size_t k = 0; k < n; ++k) {
    const size_t i = (rotate_ + k) % n;
    const Backend& backend = backends_[i];
    if (!backend.up || !backend.HasFreeId()) continue;
    if (best < 0 || backend.outstanding < backends_[best].outstanding) best = static_cast<int>(i);
  }
  ++rotate_;  // ties go round
  return best;
}

std::optional<uint16_t> FrontendBackends::Allocate(int backend_index, absl::Time now, bool probe) {
  Backend& backend = backends_[backend_index];
  uint16_t id;
  if (!backend.free_ids.empty()) {
    // A uniform draw among the free IDs; the last one takes the drawn one's place.
    const size_t drawn = random_.Below(static_cast<uint32_t>(backend.free_ids.size()));
    id = backend.free_ids[drawn];
    backend.free_ids[drawn] = backend.free_ids.back();
    backend.free_ids.pop_back();
  } else if (!backend.quarantine.empty()) {
    // Only with more than 65536 - kQuarantinedIds in flight to one backend: the longest freed.
    id = backend.quarantine.front();
    backend.quarantine.pop_front();
  } else {
    return std::nullopt;
  }
  InFlight& entry = backend.table[id];
  entry.used = true;
  entry.probe = probe;
  entry.tcp = false;
  entry.udp_timed_out = false;
  entry.answered_stale = false;
  ++entry.generation;
  ++backend.outstanding;
  ++in_flight_;
  deadlines_.push_back({now + config_.timeout, backend_index, id, entry.generation});
  if (probe) {
    backend.probe_in_flight = true;
  } else if (config_.udp_timeout < config_.timeout) {
    udp_deadlines_.push_back({now + config_.udp_timeout, backend_index, id, entry.generation});
  }
  return id;
}

const InFlight* FrontendBackends::Find(int backend, uint16_t id) const {
  if (backend < 0 || static_cast<size_t>(backend) >= backends_.size() || !present(backend)) {
    return nullptr;
  }
  const InFlight& entry = backends_[backend].table[id];
  return entry.used ? &entry : nullptr;
}

void FrontendBackends::Free(int backend_index, uint16_t id) {
  Backend& backend = backends_[backend_index];
  backend.table[id].used = false;
  backend.quarantine.push_back(id);
  if (backend.quarantine.size() > kQuarantinedIds) {
    backend.free_ids.push_back(backend.quarantine.front());
    backend.quarantine.pop_front();
  }
  --backend.outstanding;
  --in_flight_;
}

void FrontendBackends::MarkAlive(Backend& backend) {
  backend.suspect = false;
  backend.failed_probes = 0;
}

void FrontendBackends::NoteAlive(int backend) { MarkAlive(backends_[backend]); }

bool FrontendBackends::Complete(int backend_index, uint16_t id) {
  Backend& backend = backends_[backend_index];
  if (backend.table[id].probe) backend.probe_in_flight = false;
  Free(backend_index, id);
  MarkAlive(backend);
  if (backend.up) return false;
  backend.up = true;
  ++up_count_;
  return true;
}

std::optional<FrontendBackends::Deadline> FrontendBackends::PopDue(std::deque<Deadline>& fifo,
                                                                   absl::Time now) {
  while (!fifo.empty() && fifo.front().at <= now) {
    const Deadline deadline = fifo.front();
    fifo.pop_front();
    const InFlight& entry = backends_[deadline.backend].table[deadline.id];
    if (entry.used && entry.generation == deadline.generation) return deadline;  // else answered
  }
  return std::nullopt;
}

std::optional<FrontendBackends::Expired> FrontendBackends::PopExpired(absl::Time now) {
  while (std::optional<Deadline> due = PopDue(udp_deadlines_, now)) {
    InFlight& entry = backends_[due->backend].table[due->id];
    if (entry.tcp) continue;  // already on TCP after a TC=1 answer
    entry.tcp = true;
    entry.udp_timed_out = true;
    return Expired{.backend = due->backend, .id = due->id, .entry = entry, .retry_over_tcp = true};
  }
  const std::optional<Deadline> due = PopDue(deadlines_, now);
  if (!due.has_value()) return std::nullopt;
  Backend& backend = backends_[due->backend];
  Expired expired{.backend = due->backend, .id = due->id, .entry = backend.table[due->id]};
  // A copy above: the ID may be reused at once.
  Free(due->backend, due->id);
  if (!expired.entry.probe) {
    if (backend.up && !backend.suspect) {
      backend.suspect = true;
      backend.next_probe = now;  // probe at once
    }
    return expired;
  }
  backend.probe_in_flight = false;
  ++backend.failed_probes;
  if (backend.up && backend.failed_probes >= config_.down_after) {
    backend.up = false;
    backend.suspect = false;
    --up_count_;
    expired.marked_down = true;
  }
  backend.next_probe = backend.up ? now : now + config_.probe_interval;
  return expired;
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
    const bool wanted = present(static_cast<int>(i)) && (!backend.up || backend.suspect);
    if (!wanted || backend.probe_in_flight || backend.next_probe > now || !backend.HasFreeId()) {
      continue;
    }
    backend.next_probe = now + config_.probe_interval;
    return static_cast<int>(i);
  }
  return -1;
}

}  // namespace onepass::dns
