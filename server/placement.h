// Which CPU each worker runs on and whether connections are steered by CPU: decided once at
// startup from --workers, --cpus, --steering and the process's affinity mask.
#ifndef ONEPASS_SERVER_PLACEMENT_H_
#define ONEPASS_SERVER_PLACEMENT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "server/server_config.h"

namespace onepass {

struct WorkerPlacement {
  // worker_cpus[i]: the CPU worker i is pinned to, or -1 when workers are not pinned.
  std::vector<int> worker_cpus;
  bool pinned = false;
  // Attach the CPU steering program (BuildCpuSteeringProgram) to every listener group.
  bool cpu_steering = false;
  // Why steering is what it is, when that is worth a log line (empty otherwise).
  std::string note;
};

// Rules:
//  - --cpus given: one worker per listed CPU, each of which must be in `allowed_cpus`;
//    --workers, if also given, must equal the number of CPUs listed.
//  - otherwise: --workers (default: |allowed_cpus|) workers, pinned to allowed_cpus in order
//    when there are enough of them, not pinned when there are more workers than CPUs.
//  - --steering auto: cpu when pinned, else hash; --steering cpu without pinning is an error.
// Errors are one sentence saying what to change.
absl::StatusOr<WorkerPlacement> PlaceWorkers(const ServerConfig& config,
                                             absl::Span<const int> allowed_cpus);

}  // namespace onepass

#endif  // ONEPASS_SERVER_PLACEMENT_H_
