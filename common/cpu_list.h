// CPU lists as the kernel writes them ("0-3,8,10-11"), for --cpus flags.
#ifndef ONEPASS_COMMON_CPU_LIST_H_
#define ONEPASS_COMMON_CPU_LIST_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace onepass {

// Parses "0-3,8" into {0,1,2,3,8}, in the order given, without duplicates.
// Rejects empty items, reversed ranges, negative numbers and CPUs >= CPU_SETSIZE.
absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text);

// Formats {0,1,2,3,8} as "0-3,8".
std::string FormatCpuList(const std::vector<int>& cpus);

// The CPUs in this process's affinity mask (sched_getaffinity), ascending.
std::vector<int> AllowedCpus();

}  // namespace onepass

#endif  // ONEPASS_COMMON_CPU_LIST_H_
