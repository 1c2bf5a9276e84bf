// CPU lists as the kernel writes them ("0-3,8,10-11"), for --cpus flags, and pinning a thread
// to one CPU of such a list.
#ifndef ONEPASS_COMMON_CPU_LIST_H_
#define ONEPASS_COMMON_CPU_LIST_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass {

// Parses "0-3,8" into {0,1,2,3,8}, in the order given, without duplicates.
// Rejects empty items, reversed ranges, negative numbers and CPUs >= CPU_SETSIZE.
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// Formats {0,1,2,3,8} as "0-3,8".
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs in this process's affinity mask (sched_getaffinity), ascending.
std::vector<int> AllowedCpus();

// Pins the calling thread to `cpu` (pthread_setaffinity_np). On failure (a CPU outside the
// process's cpuset, or offline) the thread keeps its affinity and the error says why
// (strerror); whether that is fatal is the caller's call.
absl::Status PinCurrentThread(int cpu);

}  // namespace onepass

#endif  // ONEPASS_COMMON_CPU_LIST_H_
