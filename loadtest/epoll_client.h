// One client thread of the epoll core (--engine epoll, and every --proto dot run): its own
// epoll loop (the run loop of client_loop.h) driving many short connections, each a
// non-blocking socket registered once, edge-triggered for both directions: connect -> send what
// the connection's machine has -> receive and report until the machine has ended -> close.
// The machine decides everything else: plain TCP takes the exchange (exchange.h: the request,
// every answer judged), DNS over TLS (RFC 7858) the TLS machine around it (tls_exchange.h:
// ClientHello, the server's flight, the Finished and the query in one send, the answer,
// close_notify). Nothing is shared with other threads but the read-only config and protocol.
#ifndef ONEPASS_LOADTEST_EPOLL_CLIENT_H_
#define ONEPASS_LOADTEST_EPOLL_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "loadtest/load_config.h"
#include "loadtest/load_thread.h"

namespace onepass::load {

// Makes the epoll core's thread `index`: DNS over TLS when `config.tls` is set, else plain TCP.
// `start_ns`: the common start of all threads (CLOCK_MONOTONIC); `stop`: set on SIGINT.
std::unique_ptr<LoadThread> MakeEpollClientThread(const LoadConfig& config, int index,
                                                  int64_t start_ns, const std::atomic<bool>* stop);

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_EPOLL_CLIENT_H_
