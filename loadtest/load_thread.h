// What the runner needs of one client thread, whichever core (--engine) drives its sockets:
// the epoll core (epoll_client.h) or the io_uring core (uring_client.h), both on the run loop
// of client_loop.h.
#ifndef ONEPASS_LOADTEST_LOAD_THREAD_H_
#define ONEPASS_LOADTEST_LOAD_THREAD_H_

#include "loadtest/thread_stats.h"

namespace onepass::load {

class LoadThread {
 public:
  virtual ~LoadThread() = default;

  // Runs the loop until this thread's share is done; call on its own std::thread.
  virtual void Run() = 0;

  // A copy of the statistics published so far (a few times a second, and complete after
  // Run()). Thread-safe.
  virtual ThreadStats Snapshot() = 0;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_LOAD_THREAD_H_
