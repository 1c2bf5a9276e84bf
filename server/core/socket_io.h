// The socket calls of a connection (server/core/connection.h), behind one small interface so that
// the core's state machine can be driven without real sockets (tests/unit/server: a scripted
// EAGAIN, a partial send, a reset) and so that a layer can sit between the socket and the
// handler later. The kernel's is the one every worker uses (KernelSocketIo).
#ifndef ONEPASS_SERVER_CORE_SOCKET_IO_H_
#define ONEPASS_SERVER_CORE_SOCKET_IO_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace onepass {

class SocketIo {
 public:
  virtual ~SocketIo() = default;
  // recv(2) without blocking: bytes taken, 0 at the peer's EOF, or -errno.
  virtual ssize_t Receive(int fd, absl::Span<uint8_t> into) = 0;
  // send(2) without blocking or SIGPIPE; `more` holds the tail back for the next send or the
  // close (MSG_MORE). Bytes taken or -errno.
  virtual ssize_t Send(int fd, absl::Span<const uint8_t> bytes, bool more) = 0;
  // sendfile(2) without blocking: up to `count` bytes of `file` from `offset` (the file's own
  // position is left alone, so many connections send from one descriptor). Bytes taken or
  // -errno.
  virtual ssize_t SendFile(int fd, int file, uint64_t offset, size_t count) = 0;
  // shutdown(fd, SHUT_WR): the FIN after the last response.
  virtual void ShutdownWrite(int fd) = 0;
  // Bytes the kernel has taken but not yet sent (SIOCOUTQNSD): held back by a client that does
  // not read (a closed window).
  virtual size_t UnsentBytes(int fd) = 0;
  // Writable only once those bytes are sent (TCP_NOTSENT_LOWAT 1: server/core/socket_options.h).
  virtual void SetWritableWhenSent(int fd) = 0;
};

// The kernel's socket calls; stateless, one for the process.
SocketIo& KernelSocketIo();

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_SOCKET_IO_H_
