// The server-wide per-client table (server/core/client_limits.h): client keys by prefix, the limit,
// and the counts from several threads at once.
#include "server/core/client_limits.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace onepass {
namespace {

sockaddr_storage Address(const std::string& text) {
  sockaddr_storage storage{};
  if (text.find(':') != std::string::npos) {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage);
    v6->sin6_family = AF_INET6;
    EXPECT_EQ(inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr), 1) << text;
  } else {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
    v4->sin_family = AF_INET;
    EXPECT_EQ(inet_pton(AF_INET, text.c_str(), &v4->sin_addr), 1) << text;
  }
  return storage;
}

ClientKey Key(const std::string& text, int v4_prefix = 32, int v6_prefix = 64) {
  return ClientKeyOf(Address(text), v4_prefix, v6_prefix);
}

TEST(ClientKeyTest, Ipv6ClientsAreCountedPerPrefix) {
  // One /64: one client, whatever the interface identifier.
  EXPECT_EQ(Key("2001:db8:1:2::1"), Key("2001:db8:1:2:ffff:eeee:dddd:cccc"));
  EXPECT_NE(Key("2001:db8:1:2::1"), Key("2001:db8:1:3::1"));
  // A /48 when asked.
  EXPECT_EQ(Key("2001:db8:1:2::1", 32, 48), Key("2001:db8:1:3::1", 32, 48));
  EXPECT_NE(Key("2001:db8:1:2::1", 32, 48), Key("2001:db8:2:2::1", 32, 48));
  // /128: every address its own client.
  EXPECT_NE(Key("2001:db8::1", 32, 128), Key("2001:db8::2", 32, 128));
}

TEST(ClientKeyTest, Ipv4ClientsAreCountedPerPrefixAlsoWhenMapped) {
  EXPECT_NE(Key("192.0.2.1"), Key("192.0.2.2"));
  EXPECT_EQ(Key("192.0.2.1", 24), Key("192.0.2.200", 24));
  EXPECT_NE(Key("192.0.2.1", 24), Key("192.0.3.1", 24));
  // A v4-mapped peer on a dual-stack socket is the same client as the IPv4 one, by the v4
  // prefix (not cut to the IPv6 /64, which would make all of IPv4 one client).
  EXPECT_EQ(Key("::ffff:192.0.2.1"), Key("192.0.2.1"));
  EXPECT_NE(Key("::ffff:192.0.2.1"), Key("::ffff:192.0.2.2"));
}

TEST(ClientTableTest, LimitHoldsAcrossThreadsAndReleaseGivesBack) {
  ClientTable table(25);
  const ClientKey key = Key("2001:db8::1");
  std::vector<std::thread> threads;
  std::atomic<int> acquired{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (table.TryAcquire(key)) ++acquired;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(acquired.load(), 25);
  EXPECT_EQ(table.Count(key), 25);
  EXPECT_FALSE(table.TryAcquire(key));
  EXPECT_TRUE(table.TryAcquire(Key("2001:db8:0:1::1")));  // another /64
  table.Release(key);
  EXPECT_TRUE(table.TryAcquire(key));
  for (int i = 0; i < 25; ++i) table.Release(key);
  EXPECT_EQ(table.Count(key), 0);
}

}  // namespace
}  // namespace onepass
