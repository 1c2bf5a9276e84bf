// Frees data that a reload replaced (server.h Server::TakeRetired) on a thread of its own, at
// the lowest CPU priority: freeing the previous snapshot of a 1M-name zone takes ~0.5 s of
// CPU, which on a worker would hold up every connection of that worker, and on the main thread
// would delay signals (SIGTERM, the next SIGHUP).
#ifndef ONEPASS_SERVER_RESTART_DATA_RELEASER_H_
#define ONEPASS_SERVER_RESTART_DATA_RELEASER_H_

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "handlers/handler.h"

namespace onepass {

class DataReleaser {
 public:
  DataReleaser() = default;
  // Waits for a release still running: data is never freed after the process state it needs.
  ~DataReleaser();
  DataReleaser(const DataReleaser&) = delete;
  DataReleaser& operator=(const DataReleaser&) = delete;

  // Main thread. Frees `data` (the last references to it) on a new thread; never waits for an
  // earlier release (at nice 19 on a busy machine one can take seconds), only joins those done.
  void Release(std::vector<std::shared_ptr<const HandlerFactory>> data);

 private:
  struct Job {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Job> jobs_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_RESTART_DATA_RELEASER_H_
