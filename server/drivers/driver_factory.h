// The I/O drivers, chosen by name (--io) through one factory, as Seastar chooses its reactor
// backend: the worker asks for a loop and gets an IoDriver (server/core/io_driver.h); nothing
// else in the server names a driver.
#ifndef ONEPASS_SERVER_DRIVERS_DRIVER_FACTORY_H_
#define ONEPASS_SERVER_DRIVERS_DRIVER_FACTORY_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "common/scoped_fd.h"
#include "server/core/io_driver.h"
#include "server/core/timer_queue.h"

namespace onepass {

// The loop a worker runs (--io). Both run the same worker core; docs/design.md "One worker
// core, two I/O drivers" says what each does.
enum class IoLoop {
  // libevent (epoll) readiness; accept4, recv, send and close as plain syscalls
  // (server/drivers/libevent/).
  kEpoll,
  // liburing: accept, the first recv, the last send and close submitted to a ring in batches;
  // only in a build with -DONEPASS_IO_URING=ON (server/drivers/uring/).
  kUring,
};

// The driver of worker `index` over its `listeners` (bound, listening, non-blocking).
absl::StatusOr<std::unique_ptr<IoDriver>> MakeDriver(IoLoop loop, TimerQueue* timers,
                                                     std::vector<ScopedFd> listeners, int index,
                                                     const DriverOptions& options);

}  // namespace onepass

#endif  // ONEPASS_SERVER_DRIVERS_DRIVER_FACTORY_H_
