// Every socket option the server sets, in one place, with the reason for each.
#ifndef ONEPASS_SERVER_CORE_SOCKET_OPTIONS_H_
#define ONEPASS_SERVER_CORE_SOCKET_OPTIONS_H_

#include <linux/filter.h>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace onepass {

// On a listening socket before bind: SO_REUSEADDR, SO_REUSEPORT, IPV6_V6ONLY (IPv6),
// TCP_DEFER_ACCEPT (kDeferAcceptSeconds). See socket_options.cc for why.
absl::Status SetListenerOptions(int fd, int family);

// Attaches a classic BPF program to the SO_REUSEPORT group `fd` belongs to (all its sockets
// must be bound and listening): it returns the index of the socket that gets a new connection.
absl::Status AttachReuseportProgram(int fd, absl::Span<const sock_filter> program);

// TCP_NODELAY on a listener, for every socket it accepts (part of SetListenerOptions; also for
// listeners handed over by a running server). See socket_options.cc for why.
absl::Status SetListenerNoDelay(int fd);

// On a connection whose last response the client holds back (ConnectionState::kClosingUnsent):
// the socket polls writable only once the kernel has sent every byte.
void SetWritableWhenSent(int fd);

// Before close() of a connection whose client did not read its answers in time: close sends
// RST and frees the unsent bytes at once, instead of orphaning them.
void AbortOnClose(int fd);

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_SOCKET_OPTIONS_H_
