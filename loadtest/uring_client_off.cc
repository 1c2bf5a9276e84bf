// A build without liburing (-DONEPASS_IO_URING=OFF): the uring core is absent, --engine auto
// picks epoll and --engine uring refuses to start.
#include "loadtest/uring_client.h"

namespace onepass::load {

absl::Status UringEngineAvailable(const LoadConfig& config) {
  return absl::UnavailableError("built without liburing (-DONEPASS_IO_URING=OFF)");
}

std::unique_ptr<LoadThread> MakeUringClientThread(const LoadConfig& config, int index,
                                                  int64_t start_ns, const std::atomic<bool>* stop) {
  return nullptr;
}

}  // namespace onepass::load
