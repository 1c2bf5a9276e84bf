#include "tests/integration/dns/fake_udp_backend.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "absl/time/clock.h"

namespace onepass::dns::testing {

FakeUdpBackend::FakeUdpBackend(absl::Duration delay) : delay_(delay) {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return;
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

FakeUdpBackend::~FakeUdpBackend() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) close(fd_);
}

void FakeUdpBackend::Serve() {
  std::vector<uint8_t> buffer(65536);
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 50) != 1) continue;
    sockaddr_storage from{};
    socklen_t from_length = sizeof(from);
    const ssize_t n = recvfrom(fd_, buffer.data(), buffer.size(), 0,
                               reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n < 12) continue;  // not a DNS header
    ++received;
    if (!answering) continue;
    if (delay_ > absl::ZeroDuration()) absl::SleepFor(delay_);
    buffer[2] |= 0x80;  // QR
    sendto(fd_, buffer.data(), static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from),
           from_length);
  }
}

}  // namespace onepass::dns::testing
