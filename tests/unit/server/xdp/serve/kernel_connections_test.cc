// ListKernelConnections against sockets this test makes on the loopback (their cookies read
// with SO_COOKIE), and KernelConnectionsWatch's decision.
#include "server/xdp/serve/kernel_connections.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/wait_for.h"

namespace onepass::xdp {
namespace {

using ::onepass::testing::WaitFor;

uint64_t CookieOf(int fd) {
  uint64_t cookie = 0;
  socklen_t length = sizeof(cookie);
  EXPECT_EQ(getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &length), 0);
  return cookie;
}

// A listener on 127.0.0.1 at a port of the kernel's choice; its port in `port`.
int Listen(uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(listen(fd, 8), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  port = ntohs(address.sin_port);
  return fd;
}

int Connect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  return fd;
}

bool Lists(uint16_t port, uint64_t cookie) {
  const uint16_t ports[] = {port};
  absl::StatusOr<absl::flat_hash_set<uint64_t>> listed = ListKernelConnections(ports);
  EXPECT_TRUE(listed.ok()) << listed.status();
  return listed.ok() && listed->contains(cookie);
}

// The server's side of a connection on the port is listed, accepted or still in the accept
// queue; the listener and the client's side (another local port) are not, and neither is the
// server's side once it is in TIME_WAIT (the server closed first).
TEST(ListKernelConnectionsTest, ListsTheLiveConnectionsOfThePortOnly) {
  uint16_t port = 0;
  const int listener = Listen(port);
  const int client = Connect(port);
  const int queued_client = Connect(port);  // stays in the accept queue
  const int accepted = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(accepted, 0);

  const uint16_t ports[] = {port};
  absl::StatusOr<absl::flat_hash_set<uint64_t>> listed = ListKernelConnections(ports);
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(listed->size(), 2u);  // `accepted` and the one in the queue
  EXPECT_TRUE(listed->contains(CookieOf(accepted)));
  EXPECT_FALSE(listed->contains(CookieOf(listener)));
  EXPECT_FALSE(listed->contains(CookieOf(client)));
  const uint16_t other_ports[] = {static_cast<uint16_t>(port + 1)};
  absl::StatusOr<absl::flat_hash_set<uint64_t>> other = ListKernelConnections(other_ports);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->contains(CookieOf(accepted)));
  // The kernel's filter (a test per port, jumps between them) with the port first, in the
  // middle and last among others.
  const uint16_t a = port + 1, b = port + 2;
  for (const std::vector<uint16_t>& list : std::vector<std::vector<uint16_t>>{
           {port, a}, {a, port}, {a, port, b}, {a, b, port}, {a, b}}) {
    absl::StatusOr<absl::flat_hash_set<uint64_t>> some = ListKernelConnections(list);
    ASSERT_TRUE(some.ok()) << some.status();
    const bool has_port = std::find(list.begin(), list.end(), port) != list.end();
    EXPECT_EQ(some->contains(CookieOf(accepted)), has_port) << list.size() << " ports";
    EXPECT_EQ(some->size(), has_port ? 2u : 0u) << list.size() << " ports";
  }

  // The server closes first: FIN_WAIT2 is still a connection; after the client's FIN, the
  // server's side is in TIME_WAIT, which a client's SYN may reuse: no longer listed.
  const uint64_t cookie = CookieOf(accepted);
  ASSERT_EQ(shutdown(accepted, SHUT_WR), 0);
  EXPECT_TRUE(Lists(port, cookie));
  close(client);
  EXPECT_TRUE(WaitFor([&] { return !Lists(port, cookie); }, absl::Seconds(10)));
  close(accepted);
  close(queued_client);
  close(listener);
}

TEST(KernelConnectionsWatchTest, DoneAtOnceWithNoConnectionAtTheAttach) {
  KernelConnectionsWatch watch({});
  EXPECT_TRUE(watch.done());
  EXPECT_EQ(watch.at_attach(), 0u);
}

// Done when every connection of the first list has gone; connections made since (another
// interface's, a queue with no socket of ours) do not keep it going.
TEST(KernelConnectionsWatchTest, DoneWhenTheFirstListHasGone) {
  KernelConnectionsWatch watch({1, 2, 3});
  EXPECT_FALSE(watch.done());
  EXPECT_FALSE(watch.Update({1, 2, 3, 4}));
  EXPECT_EQ(watch.left(), 3u);
  EXPECT_FALSE(watch.Update({2, 4, 5}));
  EXPECT_EQ(watch.left(), 1u);
  // A cookie that went and came back cannot happen (never reused); gone is gone.
  EXPECT_FALSE(watch.Update({1, 2}));
  EXPECT_EQ(watch.left(), 1u);
  EXPECT_TRUE(watch.Update({4, 5, 6}));
  EXPECT_TRUE(watch.done());
  EXPECT_EQ(watch.at_attach(), 3u);
}

}  // namespace
}  // namespace onepass::xdp
