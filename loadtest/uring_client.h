// One client thread of the io_uring core (--engine uring): each connection is one linked chain
// of submissions
//
//   SOCKET (direct) -> [BIND (--source)] -> CONNECT -> SEND -> RECV
//
// on a ring descriptor (no process fd table, no per-connection setsockopt), every link but the
// RECV with IOSQE_CQE_SKIP_SUCCESS, so a chain posts exactly one completion: the RECV's, or the
// first failure's (the links after a failure that skips its success are cancelled silently).
// A chain per connection is in flight at a time; after its completion the Exchange (the state
// machine, exchange.h) says what follows: a further SEND -> RECV or RECV chain (short answers,
// more queries), or a CLOSE. Many connections' chains go to the kernel in one io_uring_enter,
// which also waits, so a connection costs no system call of its own. Source addresses and
// ports (--source) are chosen here, not by the kernel: a fixed rotation over the addresses and
// this thread's share of the local port range. The schedule, deadlines and counts are the run
// loop's (client_loop.h), as for the epoll core.
#ifndef ONEPASS_LOADTEST_URING_CLIENT_H_
#define ONEPASS_LOADTEST_URING_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "loadtest/load_config.h"
#include "loadtest/load_thread.h"

namespace onepass::load {

// Whether this kernel and build can run the uring core for `config` (IORING_OP_SOCKET, Linux
// 5.19; with --source IORING_OP_BIND, 6.11); the reason when not.
absl::Status UringEngineAvailable(const LoadConfig& config);

// Makes the uring core's thread `index`; nullptr in a build without liburing.
std::unique_ptr<LoadThread> MakeUringClientThread(const LoadConfig& config, int index,
                                                  int64_t start_ns, const std::atomic<bool>* stop);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_URING_CLIENT_H_
