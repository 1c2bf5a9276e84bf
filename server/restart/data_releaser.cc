#include "server/restart/data_releaser.h"

#include <sys/resource.h>
#include <unistd.h>

#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/log.h"

namespace onepass {

DataReleaser::~DataReleaser() {
  for (Job& job : jobs_) job.thread.join();
}

void DataReleaser::Release(std::vector<std::shared_ptr<const HandlerFactory>> data) {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->done->load(std::memory_order_acquire)) {
      it->thread.join();
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  if (data.empty()) return;
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([data = std::move(data), done]() mutable {
    // Linux: nice applies per thread. Idle CPU is enough for this; workers come first.
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), 19);
    const absl::Time start = absl::Now();
    const size_t count = data.size();
    data.clear();
    LogInfo("freed the previous data (%d generation%s) in %s, off the workers", count,
            count == 1 ? "" : "s", absl::FormatDuration(absl::Now() - start));
    done->store(true, std::memory_order_release);
  });
  jobs_.push_back({std::move(thread), std::move(done)});
}

}  // namespace onepass
