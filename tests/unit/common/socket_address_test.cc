#include "common/socket_address.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace onepass {
namespace {

TEST(SocketAddressTest, ParsesAndFormatsBothFamilies) {
  struct Case {
    const char* text;
    int family;
    int port;
    const char* formatted;
  } cases[] = {
      {"127.0.0.1:53", AF_INET, 53, "127.0.0.1:53"},
      {"0.0.0.0:0", AF_INET, 0, "0.0.0.0:0"},
      {"[::1]:5300", AF_INET6, 5300, "[::1]:5300"},
      {"[::]:65535", AF_INET6, 65535, "[::]:65535"},
      {"[2001:db8::1]:43", AF_INET6, 43, "[2001:db8::1]:43"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<SocketAddress> address = ParseSocketAddress(c.text);
    ASSERT_TRUE(address.ok()) << c.text << ": " << address.status();
    EXPECT_EQ(address->family(), c.family) << c.text;
    EXPECT_EQ(address->port(), c.port) << c.text;
    EXPECT_EQ(address->ToString(), c.formatted);
  }
}

TEST(SocketAddressTest, RejectsWithAHint) {
  for (const char* text :
       {"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:x", "127.0.0.1:65536", "127.0.0.1:-1", "::1:53",
        "[::1:53", "[::1]", "localhost:53", "[127.0.0.1]:53", "1.2.3:53"}) {
    absl::StatusOr<SocketAddress> address = ParseSocketAddress(text);
    EXPECT_FALSE(address.ok()) << text;
    EXPECT_NE(address.status().message().find("ADDR:PORT"), absl::string_view::npos) << text;
  }
}

TEST(SocketAddressTest, WordsErrorsForItsUse) {
  absl::StatusOr<SocketAddress> listen =
      ParseSocketAddress("localhost:53", {.what = "listen address"});
  ASSERT_FALSE(listen.ok());
  EXPECT_EQ(listen.status().message(),
            "bad listen address 'localhost:53': not a numeric IPv4 address (IPv6 goes in "
            "brackets); write ADDR:PORT, e.g. 127.0.0.1:53 or [::1]:53 (port 0 picks a free port)");
  // A load tester's target needs a real port, and gets no hint about port 0.
  absl::StatusOr<SocketAddress> target =
      ParseSocketAddress("127.0.0.1:0", {.what = "target", .min_port = 1});
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.status().message(),
            "bad target '127.0.0.1:0': the port is not a number from 1 to 65535; write "
            "ADDR:PORT, e.g. 127.0.0.1:53 or [::1]:53");
  EXPECT_TRUE(ParseSocketAddress("[::1]:1", {.what = "target", .min_port = 1}).ok());
}

TEST(SocketAddressTest, ToStringWithoutPort) {
  absl::StatusOr<SocketAddress> v4 = ParseSocketAddress("10.1.2.3:43");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->ToString(/*with_port=*/false), "10.1.2.3");
  absl::StatusOr<SocketAddress> v6 = ParseSocketAddress("[fd00::1]:43");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->ToString(/*with_port=*/false), "fd00::1");
}

TEST(SocketAddressTest, ParsesBareAddresses) {
  absl::StatusOr<SocketAddress> v4 = ParseIpAddress("127.0.0.2");
  ASSERT_TRUE(v4.ok()) << v4.status();
  EXPECT_EQ(v4->family(), AF_INET);
  EXPECT_EQ(v4->length, sizeof(sockaddr_in));
  EXPECT_EQ(v4->port(), 0);
  absl::StatusOr<SocketAddress> v6 = ParseIpAddress("fd00::2");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->family(), AF_INET6);
  EXPECT_EQ(v6->length, sizeof(sockaddr_in6));
  EXPECT_EQ(v6->ToString(), "[fd00::2]:0");
  for (const char* text : {"", "localhost", "[::1]", "127.0.0.1:53", "1.2.3", "fd00::g"}) {
    EXPECT_FALSE(ParseIpAddress(text).ok()) << text;
  }
}

TEST(SocketAddressTest, LocalAddressReadsTheBoundPort) {
  absl::StatusOr<SocketAddress> any = ParseSocketAddress("127.0.0.1:0");
  ASSERT_TRUE(any.ok());
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(bind(fd, any->get(), any->length), 0);
  absl::StatusOr<SocketAddress> bound = LocalAddress(fd);
  close(fd);
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->family(), AF_INET);
  EXPECT_GT(bound->port(), 0);
  EXPECT_EQ(bound->ToString(false), "127.0.0.1");
  EXPECT_FALSE(LocalAddress(-1).ok());
}

}  // namespace
}  // namespace onepass
