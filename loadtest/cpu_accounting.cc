#include "loadtest/cpu_accounting.h"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

namespace onepass::load {
namespace {

// The first field of a schedstat file: time spent on the CPU [ns].
int64_t ReadSchedstat(const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return 0;
  unsigned long long runtime = 0;
  if (std::fscanf(file, "%llu", &runtime) != 1) runtime = 0;
  std::fclose(file);
  return static_cast<int64_t>(runtime);
}

}  // namespace

int64_t ProcessSchedNs(pid_t pid) {
  if (pid <= 0) return 0;
  const std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return 0;
  int64_t sum = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    sum += ReadSchedstat(absl::StrCat(tasks, "/", entry->d_name, "/schedstat"));
  }
  closedir(dir);
  return sum;
}

int64_t ThreadSchedNs() { return ReadSchedstat("/proc/thread-self/schedstat"); }

std::vector<pid_t> KsoftirqdPids(const std::vector<int>& cpus) {
  std::vector<pid_t> pids;
  if (cpus.empty()) return pids;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return pids;
  while (dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    FILE* file = std::fopen(absl::StrCat("/proc/", pid, "/comm").c_str(), "r");
    if (file == nullptr) continue;
    char comm[64] = "";
    int cpu = -1;
    if (std::fgets(comm, sizeof(comm), file) != nullptr &&
        std::sscanf(comm, "ksoftirqd/%d", &cpu) == 1) {
      for (int wanted : cpus) {
        if (wanted == cpu) pids.push_back(static_cast<pid_t>(pid));
      }
    }
    std::fclose(file);
  }
  closedir(dir);
  return pids;
}

CpuMeter::CpuMeter(pid_t pid, const std::vector<int>& cpus)
    : pid_(pid), softirq_pids_(KsoftirqdPids(cpus)) {}

void CpuMeter::Start() {
  process_start_ = ProcessSchedNs(pid_);
  softirq_start_ = SoftirqNow();
}

int64_t CpuMeter::process_ns() const { return ProcessSchedNs(pid_) - process_start_; }
int64_t CpuMeter::softirq_ns() const { return SoftirqNow() - softirq_start_; }

int64_t CpuMeter::SoftirqNow() const {
  int64_t sum = 0;
  for (pid_t pid : softirq_pids_) sum += ProcessSchedNs(pid);
  return sum;
}

}  // namespace onepass::load
