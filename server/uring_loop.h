// The io_uring worker loop (--io=uring; docs/design.md "The io_uring worker"). It replaces a
// Worker's libevent loop on the worker's own thread, with the worker's listeners, handler,
// counters and limits, and runs every connection through the same Connection::Advance:
//
//   accept (K single-shot accepts armed per listener, each with its own address slot)
//     → recv into the connection's input buffer (MSG_DONTWAIT: the request is usually there,
//       TCP_DEFER_ACCEPT) → Connection::AdvanceReceived: the handler, and the last send queued
//       on the ring with the close linked after it (FinalSendQueue)
//   and what must wait is parked: a one-shot poll for its state's readiness plus its deadline
//   (server/deadline.h), then Connection::Advance with plain syscalls, as the libevent loop.
// A forwarding handler's upstreams (--dns-backend) stay on the worker's event_base, which the
// ring drives: a poll on the base's epoll instance and the upstream tick run it without
// blocking; answers reach parked connections as on the libevent loop (uring_upstream.cc).
//
// Only in a build with -DONEPASS_IO_URING=ON; otherwise RunUringLoop says so.
#ifndef ONEPASS_SERVER_URING_LOOP_H_
#define ONEPASS_SERVER_URING_LOOP_H_

#include "absl/status/status.h"

namespace onepass {

class Worker;

// True when this build has the loop (CMake option ONEPASS_IO_URING).
bool UringLoopBuilt();

// Whether this kernel lets this process set up a ring (io_uring_disabled, seccomp, an old
// kernel): an error that says what to do instead. On any thread, before the workers start.
absl::Status ProbeUring();

// Runs `worker`'s connections on a ring until it has drained (Worker::RequestStop). On the
// worker's thread, pinned, with the worker's scratch connection made (Worker::Run). An error
// only when the ring could not be set up; nothing was served then.
absl::Status RunUringLoop(Worker& worker);

}  // namespace onepass

#endif  // ONEPASS_SERVER_URING_LOOP_H_
