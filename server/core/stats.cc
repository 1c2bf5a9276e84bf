#include "server/core/stats.h"

#include "absl/strings/str_cat.h"

namespace onepass {

StatsSnapshot& StatsSnapshot::operator+=(const StatsSnapshot& other) {
#define ONEPASS_ADD_COUNTER(name, help) name += other.name;
#define ONEPASS_SKIP_TOTAL(name, help, sum)
  ONEPASS_WORKER_COUNTERS(ONEPASS_ADD_COUNTER, ONEPASS_SKIP_TOTAL)
#undef ONEPASS_ADD_COUNTER
#undef ONEPASS_SKIP_TOTAL
  ComputeTotals();
  return *this;
}

void StatsSnapshot::ComputeTotals() {
#define ONEPASS_SKIP_COUNTER(name, help)
#define ONEPASS_COMPUTE_TOTAL(name, help, sum) name = sum;
  ONEPASS_WORKER_COUNTERS(ONEPASS_SKIP_COUNTER, ONEPASS_COMPUTE_TOTAL)
#undef ONEPASS_SKIP_COUNTER
#undef ONEPASS_COMPUTE_TOTAL
}

std::string StatsSnapshot::Format() const {
  std::string text;
#define ONEPASS_FORMAT_COUNTER(name, help) \
  absl::StrAppend(&text, text.empty() ? "" : " ", #name "=", name);
#define ONEPASS_FORMAT_TOTAL(name, help, sum) ONEPASS_FORMAT_COUNTER(name, help)
  ONEPASS_WORKER_COUNTERS(ONEPASS_FORMAT_COUNTER, ONEPASS_FORMAT_TOTAL)
#undef ONEPASS_FORMAT_COUNTER
#undef ONEPASS_FORMAT_TOTAL
  return text;
}

StatsSnapshot WorkerStats::Read() const {
  StatsSnapshot snapshot;
#define ONEPASS_READ_COUNTER(name, help) snapshot.name = name.load(std::memory_order_relaxed);
#define ONEPASS_SKIP_TOTAL(name, help, sum)
  ONEPASS_WORKER_COUNTERS(ONEPASS_READ_COUNTER, ONEPASS_SKIP_TOTAL)
#undef ONEPASS_READ_COUNTER
#undef ONEPASS_SKIP_TOTAL
  snapshot.ComputeTotals();
  return snapshot;
}

}  // namespace onepass
