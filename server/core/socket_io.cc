#include "server/core/socket_io.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <cerrno>

#include "server/core/socket_options.h"

namespace onepass {
namespace {

class Kernel final : public SocketIo {
 public:
  ssize_t Receive(int fd, absl::Span<uint8_t> into) override {
    const ssize_t received = recv(fd, into.data(), into.size(), MSG_DONTWAIT);
    return received < 0 ? -errno : received;
  }
  ssize_t Send(int fd, absl::Span<const uint8_t> bytes, bool more) override {
    const ssize_t sent =
        send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0));
    return sent < 0 ? -errno : sent;
  }
  ssize_t SendFile(int fd, int file, uint64_t offset, size_t count) override {
    // The socket is non-blocking (accept4 SOCK_NONBLOCK): a full send buffer gives EAGAIN.
    off_t position = static_cast<off_t>(offset);
    const ssize_t sent = sendfile(fd, file, &position, count);
    return sent < 0 ? -errno : sent;
  }
  void ShutdownWrite(int fd) override { shutdown(fd, SHUT_WR); }
  size_t UnsentBytes(int fd) override {
    int unsent = 0;
    if (ioctl(fd, SIOCOUTQNSD, &unsent) != 0 || unsent < 0) return 0;
    return static_cast<size_t>(unsent);
  }
  void SetWritableWhenSent(int fd) override { onepass::SetWritableWhenSent(fd); }
};

}  // namespace

SocketIo& KernelSocketIo() {
  static Kernel kernel;
  return kernel;
}

}  // namespace onepass
