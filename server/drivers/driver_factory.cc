#include "server/drivers/driver_factory.h"

#include <utility>

#include "server/core/core_config.h"
#include "server/drivers/libevent/libevent_driver.h"
#include "server/drivers/uring/uring_driver.h"

namespace onepass {

absl::StatusOr<std::unique_ptr<IoDriver>> MakeDriver(IoLoop loop, TimerQueue* timers,
                                                     std::vector<ScopedFd> listeners, int index,
                                                     const DriverOptions& options) {
  switch (loop) {
    case IoLoop::kUring:
      return MakeUringDriver(timers, std::move(listeners), index, options);
    case IoLoop::kEpoll:
      break;
  }
  absl::StatusOr<std::unique_ptr<LibeventDriver>> driver = LibeventDriver::Create(
      timers, std::move(listeners),
      options.accept_burst > 0 ? options.accept_burst : kDefaultEpollAcceptBurst, options.backlog);
  if (!driver.ok()) return driver.status();
  return std::unique_ptr<IoDriver>(*std::move(driver));
}

}  // namespace onepass
