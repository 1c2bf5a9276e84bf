#include "tests/support/loopback_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>

namespace onepass::testing {
namespace {

constexpr int kFirstPort = 10000;

// The last port below the ephemeral range; 32767 when the range is unreadable or leaves fewer
// than a thousand ports above kFirstPort.
int LastPortBelowEphemeral() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int ephemeral_low = 0;
  if (in >> ephemeral_low && ephemeral_low - 1 >= kFirstPort + 1000) return ephemeral_low - 1;
  return 32767;
}

// Whether `port` on 127.0.0.1 can be bound with `type` now (the socket is closed again).
bool Bindable(int type, int port) {
  const int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return bound;
}

}  // namespace

bool FreeForTcpAndUdp(int port) {
  return Bindable(SOCK_STREAM, port) && Bindable(SOCK_DGRAM, port);
}

int FreeLoopbackPort() {
  static const int last = LastPortBelowEphemeral();
  return FreeLoopbackPortIn(kFirstPort, last);
}

int FreeLoopbackPortIn(int first, int last) {
  // Seeded per process: two tests started at once draw different ports.
  static std::mt19937 random(std::random_device{}() ^ static_cast<unsigned>(getpid()));
  std::uniform_int_distribution<int> pick(first, last);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = pick(random);
    if (FreeForTcpAndUdp(port)) return port;
  }
  return -1;
}

}  // namespace onepass::testing
