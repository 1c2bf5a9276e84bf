#include "server/core/socket_options.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "server/core/core_config.h"

namespace onepass {
namespace {

absl::Status SetInt(int fd, int level, int name, int value, const char* what) {
  if (setsockopt(fd, level, name, &value, sizeof(value)) != 0) {
    return absl::InternalError(absl::StrCat("setsockopt(", what, "): ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SetListenerOptions(int fd, int family) {
  // Restarting while old connections sit in TIME-WAIT on the listening port must not fail.
  absl::Status status = SetInt(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
  // One listening socket per worker in the same group: no shared accept queue or lock
  // (docs/design.md "CPU steering": a shared queue breaks at high rates).
  if (status.ok()) status = SetInt(fd, SOL_SOCKET, SO_REUSEPORT, 1, "SO_REUSEPORT");
  // [::]:53 must not also take IPv4: the operator lists 0.0.0.0:53 separately if wanted.
  if (status.ok() && family == AF_INET6) {
    status = SetInt(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1, "IPV6_V6ONLY");
  }
  // Every protocol served is client-speaks-first: accept returns a socket whose request is
  // already there, so the single pass (accept, recv, process, send, close) needs no epoll
  // registration. Clients that stay silent are handed over after ~kDeferAcceptSeconds and
  // then meet the read timeout in the event loop.
  if (status.ok()) {
    status = SetInt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, kDeferAcceptSeconds, "TCP_DEFER_ACCEPT");
  }
  if (status.ok()) status = SetListenerNoDelay(fd);
  return status;
}

absl::Status SetListenerNoDelay(int fd) {
  // Accepted sockets inherit TCP_NODELAY from their listener (Linux copies the listener's TCP
  // state into each child), so no connection pays a setsockopt for it. The single pass is
  // unaffected: its one send carries MSG_MORE, which corks whatever TCP_NODELAY says, and the
  // close() that follows sends the answer and the FIN in one segment. A connection kept open
  // for more requests must not have a later small answer held by Nagle for the client's
  // delayed ACK (up to 40 ms): an answer from an upstream that follows an earlier one still
  // unacknowledged, or the tail of one larger than a segment.
  return SetInt(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
}

absl::Status AttachReuseportProgram(int fd, absl::Span<const sock_filter> program) {
  sock_fprog fprog = {};
  fprog.len = static_cast<unsigned short>(program.size());
  fprog.filter = const_cast<sock_filter*>(program.data());
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &fprog, sizeof(fprog)) != 0) {
    return absl::InternalError(absl::StrCat("setsockopt(SO_ATTACH_REUSEPORT_CBPF): ",
                                            std::strerror(errno), "; run with --steering hash"));
  }
  return absl::OkStatus();
}

// TCP_NOTSENT_LOWAT 1 (tcp(7)): writable only when fewer than 1 byte is unsent, so the event
// loop wakes a kClosingUnsent connection exactly when it may close without leaving the kernel
// anything to hold. Set only there: the single pass never pays for it.
void SetWritableWhenSent(int fd) {
  int one = 1;
  // Best effort: without it the write deadline still bounds the wait.
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &one, sizeof(one));
}

// SO_LINGER {on, 0}: the one place the server resets a connection on purpose. A client that
// took none of its answers within --write-timeout-ms would otherwise keep them in kernel memory
// after close() for as long as it keeps acknowledging with a shut window (net.ipv4 TCP memory
// is shared by every socket on the host). Nothing is lost that the client wanted.
void AbortOnClose(int fd) {
  linger abort = {.l_onoff = 1, .l_linger = 0};
  (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
}

}  // namespace onepass
