#include "server/restart/background_loader.h"

#include <thread>
#include <utility>

namespace onepass {

BackgroundLoader::~BackgroundLoader() {
  if (thread_ == nullptr) return;
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    done = shared_->done;
  }
  // A load that is stuck cannot be interrupted: it is left to end with the process.
  if (done) {
    thread_->join();
  } else {
    thread_->detach();
  }
}

bool BackgroundLoader::Start(std::function<LoadResult()> load) {
  if (thread_ != nullptr) return false;
  shared_ = std::make_shared<Shared>();
  thread_ = std::make_unique<std::thread>([shared = shared_, load = std::move(load)] {
    LoadResult result = load();
    std::lock_guard<std::mutex> lock(shared->mutex);
    shared->result = std::move(result);
    shared->done = true;
  });
  return true;
}

std::optional<LoadResult> BackgroundLoader::Take() {
  if (thread_ == nullptr) return std::nullopt;
  std::optional<LoadResult> result;
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (!shared_->done) return std::nullopt;
    result = std::move(shared_->result);
  }
  thread_->join();
  thread_.reset();
  shared_.reset();
  return result;
}

}  // namespace onepass
