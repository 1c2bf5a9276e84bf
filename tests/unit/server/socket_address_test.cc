#include "server/socket_address.h"

#include <netinet/in.h>

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

}  // namespace
}  // namespace onepass
