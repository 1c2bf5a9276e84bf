#include "server/data_releaser.h"

#include <sys/resource.h>
#include <unistd.h>

#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"

namespace onepass {

DataReleaser::~DataReleaser() {
  if (thread_.joinable()) thread_.join();
}

void DataReleaser::Release(std::vector<std::shared_ptr<const HandlerFactory>> data) {
  if (data.empty()) return;
  if (thread_.joinable()) thread_.join();
  thread_ = std::thread([data = std::move(data)]() mutable {
    // Linux: nice applies per thread. Idle CPU is enough for this; workers come first.
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
    const absl::Time start = absl::Now();
    const size_t count = data.size();
    data.clear();
    LogInfo("freed the previous data (%d generation%s) in %s, off the workers", count,
            count == 1 ? "" : "s", absl::FormatDuration(absl::Now() - start));
  });
}

}  // namespace onepass
