// Listening sockets: one per worker per --listen address, in one SO_REUSEPORT group per
// address, and the CBPF program that steers each connection to the worker on the CPU that
// processed its SYN.
#ifndef ONEPASS_SERVER_LISTENER_H_
#define ONEPASS_SERVER_LISTENER_H_

#include <linux/filter.h>

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/scoped_fd.h"
#include "common/socket_address.h"

namespace onepass {

// The reuseport program for workers pinned to `worker_cpus` (worker i on worker_cpus[i], and
// worker i's socket is index i of the group). It loads the CPU that runs the program (the one
// whose softirq processes the SYN: the RSS queue's CPU behind a NIC, the sender's CPU on
// loopback) and returns the index of the worker pinned there. For a CPU without a worker it
// returns worker_cpus.size(): an index >= the group size makes the kernel fall back to its
// 4-tuple hash (net/core/sock_reuseport.c), so such connections are spread, not dropped.
//   worker CPUs exactly 0..N-1:  ld cpu; ret A            (A >= N: hash)
//   otherwise:                   ld cpu; jeq #c0 → ret #0; jeq #c1 → ret #1; ...; ret #N
std::vector<sock_filter> BuildCpuSteeringProgram(absl::Span<const int> worker_cpus);

// The listening sockets of every worker. by_worker[w][a] listens on bound[a].
struct ListenerSet {
  std::vector<SocketAddress> bound;  // with the real port when port 0 was asked
  std::vector<std::vector<ScopedFd>> by_worker;
};

// Opens `workers` non-blocking listening sockets on each address, bound and listening in worker
// order (that order is each socket's index in its reuseport group). Port 0: the first worker's
// socket gets a port from the kernel and the others bind to the same one. With a non-empty
// `steering_cpus` (one per worker) attaches BuildCpuSteeringProgram to every group.
// Errors name the address and say what to do (port in use, permission, not local).
absl::StatusOr<ListenerSet> OpenListeners(absl::Span<const SocketAddress> addresses, int workers,
                                          int backlog, absl::Span<const int> steering_cpus);

// Listening sockets taken over from a running server (server/restart/listener_handover.h):
// by_worker[w][a] must listen on `addresses[a]`'s family, and on its port unless that is 0. They
// keep their reuseport group and its steering program. Errors say which flag differs.
absl::StatusOr<ListenerSet> AdoptListeners(absl::Span<const SocketAddress> addresses, int workers,
                                           std::vector<std::vector<ScopedFd>> by_worker);

}  // namespace onepass

#endif  // ONEPASS_SERVER_LISTENER_H_
