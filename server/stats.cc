#include "server/stats.h"

#include "absl/strings/str_cat.h"

namespace onepass {

StatsSnapshot& StatsSnapshot::operator+=(const StatsSnapshot& other) {
#define ONEPASS_SUM_FIELD(name, help) name += other.name;
  ONEPASS_WORKER_COUNTERS(ONEPASS_SUM_FIELD)
#undef ONEPASS_SUM_FIELD
  return *this;
}

std::string StatsSnapshot::Format() const {
  std::string text;
#define ONEPASS_FORMAT_FIELD(name, help) \
  absl::StrAppend(&text, text.empty() ? "" : " ", #name "=", name);
  ONEPASS_WORKER_COUNTERS(ONEPASS_FORMAT_FIELD)
#undef ONEPASS_FORMAT_FIELD
  return text;
}

StatsSnapshot WorkerStats::Read() const {
  StatsSnapshot snapshot;
#define ONEPASS_READ_FIELD(name, help) snapshot.name = name.load(std::memory_order_relaxed);
  ONEPASS_WORKER_COUNTERS(ONEPASS_READ_FIELD)
#undef ONEPASS_READ_FIELD
  return snapshot;
}

}  // namespace onepass
