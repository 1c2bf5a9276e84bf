#include "common/cpu_list.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace onepass {
namespace {

absl::StatusOr<int> ParseCpu(absl::string_view text, absl::string_view whole) {
  int cpu = 0;
  if (!absl::SimpleAtoi(text, &cpu) || cpu < 0 || cpu >= CPU_SETSIZE) {
    return absl::InvalidArgumentError(absl::StrCat("bad CPU list '", whole, "': '", text,
                                                   "' is not a CPU number (0..", CPU_SETSIZE - 1,
                                                   "); write it like 0-3,8"));
  }
  return cpu;
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseCpuList(absl::string_view text) {
  std::vector<int> cpus;
  if (text.empty()) {
    return absl::InvalidArgumentError("empty CPU list; write it like 0-3,8");
  }
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    std::pair<absl::string_view, absl::string_view> range =
        absl::StrSplit(item, absl::MaxSplits('-', 1));
    absl::StatusOr<int> first = ParseCpu(range.first, text);
    if (!first.ok()) return first.status();
    int last = *first;
    if (item.find('-') != absl::string_view::npos) {
      absl::StatusOr<int> parsed_last = ParseCpu(range.second, text);
      if (!parsed_last.ok()) return parsed_last.status();
      last = *parsed_last;
      if (last < *first) {
        return absl::InvalidArgumentError(
            absl::StrCat("bad CPU list '", text, "': range '", item, "' runs backwards"));
      }
    }
    for (int cpu = *first; cpu <= last; ++cpu) {
      if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) cpus.push_back(cpu);
    }
  }
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  size_t i = 0;
  while (i < cpus.size()) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    absl::StrAppend(&out, cpus[i]);
    if (j > i) absl::StrAppend(&out, "-", cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

absl::Status PinCurrentThread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    return absl::InvalidArgumentError(absl::StrCat("CPU ", cpu, " is out of range"));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Returns the error number instead of setting errno.
  const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (error != 0) return absl::InternalError(std::strerror(error));
  return absl::OkStatus();
}

}  // namespace onepass
