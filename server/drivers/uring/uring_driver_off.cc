// server/drivers/uring/uring_driver.h in a build without liburing (ONEPASS_IO_URING=OFF):
// --io=uring refuses to start (Server::Create), so the driver is never made.
#include "server/drivers/uring/uring_driver.h"

namespace onepass {

bool UringDriverBuilt() { return false; }

absl::Status ProbeUring() {
  return absl::FailedPreconditionError(
      "--io=uring: this onepassd was built without io_uring; rebuild with "
      "cmake -DONEPASS_IO_URING=ON (needs liburing-dev), or use --io=epoll");
}

absl::StatusOr<std::unique_ptr<IoDriver>> MakeUringDriver(TimerQueue*, std::vector<ScopedFd>, int,
                                                          const DriverOptions&) {
  return ProbeUring();
}

}  // namespace onepass
