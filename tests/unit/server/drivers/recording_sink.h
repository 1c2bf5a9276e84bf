// A ConnectionSink (server/core/io_driver.h) that records what a driver hands it, for the
// drivers' own tests: real listening sockets on loopback, no worker core.
#ifndef ONEPASS_TESTS_UNIT_SERVER_DRIVERS_RECORDING_SINK_H_
#define ONEPASS_TESTS_UNIT_SERVER_DRIVERS_RECORDING_SINK_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include "common/scoped_fd.h"
#include "server/core/io_driver.h"

namespace onepass::testing {

// A bound, listening, non-blocking socket on 127.0.0.1, and its port.
inline ScopedFd LoopbackListener(int* port) {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      listen(fd.get(), 64) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return ScopedFd();
  }
  *port = ntohs(address.sin_port);
  return fd;
}

// A blocking client connected to 127.0.0.1:`port`.
inline int ConnectTo(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

class RecordingSink : public ConnectionSink {
 public:
  explicit RecordingSink(IoDriver* driver) : driver_(driver) {}

  void ServeAccepted(int fd, const sockaddr_storage& peer, int listener) override {
    served.push_back(listener);
    if (on_served) on_served(fd);
    driver_->CloseSocket(fd, /*abort=*/false);
  }
  Receive BeginReceive(int fd, const sockaddr_storage& peer, int listener) override {
    handle_.fd = fd;
    handle_.listener = listener;
    return {&handle_, absl::MakeSpan(buffer_)};
  }
  void Received(ReceiveHandle* handle, ssize_t result) override {
    auto* received = static_cast<Handle*>(handle);
    if (result > 0) {
      bytes.append(reinterpret_cast<const char*>(buffer_), static_cast<size_t>(result));
    }
    served.push_back(received->listener);
    if (on_received) on_received(received->fd, result);
  }
  void OnFinalSendFailed(int error) override { ++final_send_failures; }
  AcceptNext OnAcceptError(int error) override {
    return error == EAGAIN || error == EWOULDBLOCK ? AcceptNext::kDone : AcceptNext::kAcceptMore;
  }
  void OnListenersClosed() override { listeners_closed = true; }

  std::vector<int> served;  // the listener of each connection handed over
  std::string bytes;        // what the driver's own recvs brought
  std::function<void(int fd)> on_served;
  std::function<void(int fd, ssize_t result)> on_received;
  bool listeners_closed = false;
  int final_send_failures = 0;

 private:
  struct Handle final : public ReceiveHandle {
    int fd = -1;
    int listener = 0;
  };
  IoDriver* const driver_;
  Handle handle_;
  uint8_t buffer_[4096];
};

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_DRIVERS_RECORDING_SINK_H_
