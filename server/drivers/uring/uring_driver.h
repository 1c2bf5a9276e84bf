// The io_uring driver (--io=uring; docs/design.md "One worker core, two I/O drivers"): the same
// worker core over a ring instead of epoll.
//   accept (K single-shot accepts armed per listener, each with its own address slot)
//     → the first recv into the connection's input buffer (MSG_DONTWAIT: the request is usually
//       there, TCP_DEFER_ACCEPT) → the core (ConnectionSink::Received): the handler, and the
//       last send queued on the ring with the close linked after it (FinalSendQueue);
//   watches (parked connections, upstream sockets, wake-up eventfds) are one-shot polls, armed
//   again after each report for a persistent one (level-triggered, as epoll), and closes go on
//   the ring too: one io_uring_enter per round submits them all.
// Only in a build with -DONEPASS_IO_URING=ON; otherwise MakeUringDriver says so.
#ifndef ONEPASS_SERVER_DRIVERS_URING_URING_DRIVER_H_
#define ONEPASS_SERVER_DRIVERS_URING_URING_DRIVER_H_

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/scoped_fd.h"
#include "server/core/io_driver.h"

namespace onepass {

// True when this build has the driver (CMake option ONEPASS_IO_URING).
bool UringDriverBuilt();

// Whether this kernel lets this process set up a ring (io_uring_disabled, seccomp, an old
// kernel): an error that says what to do instead. On any thread, before the workers start.
absl::Status ProbeUring();

// The driver, with its ring set up when it first runs (on the worker's thread, after the
// thread has its own descriptor table); watches armed before that are armed then.
absl::StatusOr<std::unique_ptr<IoDriver>> MakeUringDriver(TimerQueue* timers,
                                                          std::vector<ScopedFd> listeners,
                                                          int index, const DriverOptions& options);

}  // namespace onepass

#endif  // ONEPASS_SERVER_DRIVERS_URING_URING_DRIVER_H_
