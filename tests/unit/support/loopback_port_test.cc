#include "tests/support/loopback_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "gtest/gtest.h"

namespace onepass::testing {
namespace {

// A socket of `type` bound to 127.0.0.1:`port`, or -1.
int BoundSocket(int type, int port) {
  const int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST(FreeLoopbackPortTest, IsBelowTheEphemeralRangeAndFreeForTcpAndUdp) {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int ephemeral_low = 0;
  ASSERT_TRUE(in >> ephemeral_low);
  for (int i = 0; i < 20; ++i) {
    const int port = FreeLoopbackPort();
    ASSERT_GT(port, 0);
    EXPECT_GE(port, 10000);
    EXPECT_LT(port, ephemeral_low);
    const int tcp = BoundSocket(SOCK_STREAM, port);
    const int udp = BoundSocket(SOCK_DGRAM, port);
    EXPECT_GE(tcp, 0) << port;
    EXPECT_GE(udp, 0) << port;
    if (tcp >= 0) close(tcp);
    if (udp >= 0) close(udp);
  }
}

// The port a UDP socket holds is not free (the daemon binds both; the check for TCP alone let
// unbound meet a port an upstream UDP socket beside it held), nor the one a TCP socket holds.
TEST(FreeLoopbackPortTest, SkipsAPortTakenForUdpOrForTcp) {
  int first = -1;  // three free ports in a row, below the ephemeral range
  for (int attempt = 0; attempt < 50 && first < 0; ++attempt) {
    const int port = FreeLoopbackPort();
    ASSERT_GT(port, 0);
    if (FreeForTcpAndUdp(port + 1) && FreeForTcpAndUdp(port + 2)) first = port;
  }
  ASSERT_GT(first, 0) << "no three free ports in a row in 50 draws";
  const int udp = BoundSocket(SOCK_DGRAM, first);
  const int tcp = BoundSocket(SOCK_STREAM, first + 1);
  ASSERT_GE(udp, 0);
  ASSERT_GE(tcp, 0);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(FreeLoopbackPortIn(first, first + 2), first + 2);
  EXPECT_EQ(FreeLoopbackPortIn(first, first + 1), -1);
  close(udp);
  close(tcp);
}

}  // namespace
}  // namespace onepass::testing
