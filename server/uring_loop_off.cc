// server/uring_loop.h in a build without liburing (ONEPASS_IO_URING=OFF): --io=uring refuses
// to start (Server::CheckConfig), so the loop is never run.
#include "server/uring_loop.h"

namespace onepass {

bool UringLoopBuilt() { return false; }

absl::Status ProbeUring() {
  return absl::FailedPreconditionError(
      "--io=uring: this onepassd was built without io_uring; rebuild with "
      "cmake -DONEPASS_IO_URING=ON (needs liburing-dev), or use --io=epoll");
}

absl::Status RunUringLoop(Worker&) { return ProbeUring(); }

}  // namespace onepass
