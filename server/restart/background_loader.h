// SIGHUP loads run on a thread of their own, apart from signal handling: a load that blocks (a
// data file on a hung network mount, a FIFO opened by a loader that does not check) must not
// keep SIGTERM from stopping the server within its drain deadline.
//
// The main thread (server_main.cc) starts a load, keeps taking signals, and polls for the result
// between them; it hands a finished load to Server::Reload itself, so the server is only ever
// touched by the main thread.
#ifndef ONEPASS_SERVER_RESTART_BACKGROUND_LOADER_H_
#define ONEPASS_SERVER_RESTART_BACKGROUND_LOADER_H_

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "absl/status/statusor.h"
#include "handlers/handler.h"

namespace onepass {

using LoadResult = absl::StatusOr<std::unique_ptr<HandlerFactory>>;

class BackgroundLoader {
 public:
  BackgroundLoader() = default;
  // Joins a finished load; a load still running is left behind (see Abandon).
  ~BackgroundLoader();
  BackgroundLoader(const BackgroundLoader&) = delete;
  BackgroundLoader& operator=(const BackgroundLoader&) = delete;

  // Main thread. Runs `load` on a new thread; false (nothing started) while one still runs.
  // `load` must stay callable as long as the process lives (it may outlive this object).
  bool Start(std::function<LoadResult()> load);
  // Main thread. A load's result once it has finished (then the next Start may run), else
  // nothing.
  std::optional<LoadResult> Take();
  // Main thread. True from Start until Take returned the result.
  bool busy() const { return thread_ != nullptr; }

 private:
  // Shared with the loading thread, which may outlive this object when abandoned.
  struct Shared {
    std::mutex mutex;
    bool done = false;                 // guarded by mutex
    std::optional<LoadResult> result;  // guarded by mutex
  };
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<std::thread> thread_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_RESTART_BACKGROUND_LOADER_H_
