#include "server/placement.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"

namespace onepass {

absl::StatusOr<WorkerPlacement> PlaceWorkers(const ServerConfig& config,
                                             absl::Span<const int> allowed_cpus) {
  const std::vector<int> allowed(allowed_cpus.begin(), allowed_cpus.end());
  if (config.workers < 0) {
    return absl::InvalidArgumentError("--workers must be positive (or 0 for one per CPU)");
  }
  WorkerPlacement placement;
  if (!config.cpus.empty()) {
    for (int cpu : config.cpus) {
      if (std::find(allowed.begin(), allowed.end(), cpu) == allowed.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--cpus: CPU ", cpu, " is not in this process's affinity mask (",
                         FormatCpuList(allowed), "); list CPUs from that set"));
      }
    }
    if (config.workers != 0 && config.workers != static_cast<int>(config.cpus.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("--workers ", config.workers, " disagrees with --cpus ",
                       FormatCpuList(config.cpus), " (one worker per listed CPU); drop --workers"));
    }
    placement.worker_cpus = config.cpus;
    placement.pinned = true;
  } else {
    if (allowed.empty()) return absl::InternalError("the affinity mask has no CPU");
    const size_t workers = config.workers != 0 ? config.workers : allowed.size();
    if (workers <= allowed.size()) {
      placement.worker_cpus.assign(allowed.begin(), allowed.begin() + workers);
      placement.pinned = true;
    } else {
      placement.worker_cpus.assign(workers, -1);
    }
  }

  switch (config.steering) {
    case Steering::kHash:
      placement.cpu_steering = false;
      break;
    case Steering::kCpu:
      if (!placement.pinned) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--steering cpu needs one pinned worker per CPU, but ", placement.worker_cpus.size(),
            " workers exceed the ", allowed.size(),
            " CPUs of the affinity mask; use fewer --workers, --cpus, or --steering hash"));
      }
      placement.cpu_steering = true;
      break;
    case Steering::kAuto:
      placement.cpu_steering = placement.pinned;
      if (!placement.pinned) {
        placement.note = absl::StrCat(
            "steering by the kernel's hash: ", placement.worker_cpus.size(),
            " workers are more than the ", allowed.size(), " CPUs they could be pinned to");
      }
      break;
  }
  if (placement.cpu_steering) {
    std::vector<int> uncovered;
    for (int cpu : allowed) {
      if (std::find(placement.worker_cpus.begin(), placement.worker_cpus.end(), cpu) ==
          placement.worker_cpus.end()) {
        uncovered.push_back(cpu);
      }
    }
    if (!uncovered.empty()) {
      placement.note = absl::StrCat(
          "steering by CPU; connections whose packets are processed on CPUs ",
          FormatCpuList(uncovered), " (no worker there) go to a worker by the kernel's hash");
    }
  }
  return placement;
}

}  // namespace onepass
