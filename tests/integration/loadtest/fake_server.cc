#include "tests/integration/loadtest/fake_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace onepass::load::testing {

FakeServer::FakeServer(std::function<bool(const std::string&)> complete,
                       std::function<FakeAction(int, const std::string&)> respond)
    : complete_(std::move(complete)), respond_(std::move(respond)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      listen(listen_fd_, 1024) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    std::abort();  // a test machine without loopback cannot run these tests at all
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { Loop(); });
}

FakeServer::~FakeServer() {
  stop_.store(true);
  thread_.join();
  for (int fd : hung_) close(fd);
  close(listen_fd_);
}

void FakeServer::Loop() {
  while (!stop_.load()) {
    pollfd waiting = {listen_fd_, POLLIN, 0};
    if (poll(&waiting, 1, 50) <= 0) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    int index = accepted_.fetch_add(1);
    std::string request;
    char buffer[4096];
    // Read the whole request, but never wait more than 2 s on one client.
    while (!complete_(request)) {
      pollfd readable = {fd, POLLIN, 0};
      if (poll(&readable, 1, 2000) <= 0) break;
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      request.append(buffer, static_cast<size_t>(n));
    }
    FakeAction action = respond_(index, request);
    switch (action.kind) {
      case FakeAction::kReply:
        send(fd, action.reply.data(), action.reply.size(), MSG_NOSIGNAL);
        close(fd);
        break;
      case FakeAction::kCloseSilently:
        close(fd);
        break;
      case FakeAction::kReset: {
        linger abort_on_close = {1, 0};  // RST instead of FIN
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof(abort_on_close));
        close(fd);
        break;
      }
      case FakeAction::kHang:
        hung_.push_back(fd);
        break;
    }
  }
}

bool DnsRequestComplete(const std::string& request) {
  if (request.size() < 2) return false;
  size_t length = (static_cast<uint8_t>(request[0]) << 8) | static_cast<uint8_t>(request[1]);
  return request.size() >= 2 + length;
}

bool LineComplete(const std::string& request) { return request.find('\n') != std::string::npos; }

std::string DnsAnswer(const std::string& request, bool wrong_id) {
  std::string message = request.substr(2);
  message[2] = static_cast<char>(0x84);
  message[3] = 0;
  message[7] = 1;
  if (wrong_id) message[1] = static_cast<char>(message[1] ^ 0x5A);
  message += std::string("\xC0\x0C\x00\x01\x00\x01\x00\x00\x0E\x10\x00\x04\xC0\x00\x02\x01", 16);
  std::string framed;
  framed.push_back(static_cast<char>(message.size() >> 8));
  framed.push_back(static_cast<char>(message.size() & 0xFF));
  return framed + message;
}

}  // namespace onepass::load::testing
