// The one 16-byte client address form (IPv4 v4-mapped) and prefixes over it, shared by the
// per-client limits, the PROXY protocol's trusted senders and Whois' rate-limit exemptions.
#include "common/address_prefix.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

#include "gtest/gtest.h"

namespace onepass {
namespace {

MappedAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

TEST(AddressPrefixTest, MapsBothFamiliesToOneForm) {
  sockaddr_storage storage{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&storage);
  v4->sin_family = AF_INET;
  ASSERT_EQ(inet_pton(AF_INET, "192.0.2.7", &v4->sin_addr), 1);
  EXPECT_EQ(MapAddress(storage), V4(192, 0, 2, 7));

  sockaddr_storage storage6{};
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&storage6);
  v6->sin6_family = AF_INET6;
  ASSERT_EQ(inet_pton(AF_INET6, "::ffff:192.0.2.7", &v6->sin6_addr), 1);
  EXPECT_EQ(MapAddress(storage6), V4(192, 0, 2, 7));  // dual-stack socket: the same client
  ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::1", &v6->sin6_addr), 1);
  MappedAddress expected{};
  std::memcpy(expected.data(), &v6->sin6_addr, 16);
  EXPECT_EQ(MapAddress(storage6), expected);

  sockaddr_storage unix_socket{};
  unix_socket.ss_family = AF_UNIX;
  EXPECT_EQ(MapAddress(unix_socket), MappedAddress{});
  const uint8_t raw[4] = {10, 1, 2, 3};
  EXPECT_EQ(MapIpv4(raw), V4(10, 1, 2, 3));
}

TEST(AddressPrefixTest, ParsesPrefixesOfBothFamilies) {
  auto v4 = ParseAddressPrefix("192.0.2.0/24");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->length, 96 + 24);
  EXPECT_TRUE(v4->Contains(V4(192, 0, 2, 200)));
  EXPECT_FALSE(v4->Contains(V4(192, 0, 3, 1)));
  auto one = ParseAddressPrefix(" 192.0.2.7 ");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->length, 128);
  EXPECT_TRUE(one->Contains(V4(192, 0, 2, 7)));
  EXPECT_FALSE(one->Contains(V4(192, 0, 2, 8)));
  auto odd = ParseAddressPrefix("10.128.0.0/9");
  ASSERT_TRUE(odd.ok());
  EXPECT_TRUE(odd->Contains(V4(10, 200, 1, 1)));
  EXPECT_FALSE(odd->Contains(V4(10, 100, 1, 1)));
  auto all = ParseAddressPrefix("0.0.0.0/0");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->Contains(V4(203, 0, 113, 1)));
  MappedAddress v6_peer{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_FALSE(all->Contains(v6_peer));  // an IPv4 /0 is ::ffff:0:0/96, not every address
  auto v6 = ParseAddressPrefix("2001:db8::/32");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->length, 32);
  EXPECT_TRUE(v6->Contains(v6_peer));
  EXPECT_FALSE(v6->Contains(V4(32, 1, 13, 184)));

  EXPECT_FALSE(ParseAddressPrefix("192.0.2.0/33").ok());
  EXPECT_FALSE(ParseAddressPrefix("192.0.2.0/-1").ok());
  EXPECT_FALSE(ParseAddressPrefix("192.0.2.0/").ok());
  EXPECT_FALSE(ParseAddressPrefix("::1/129").ok());
  EXPECT_FALSE(ParseAddressPrefix("example.com").ok());
  EXPECT_FALSE(ParseAddressPrefixList("127.0.0.1,nope").ok());
  auto list = ParseAddressPrefixList("127.0.0.1, ::1,");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);
  auto none = ParseAddressPrefixList("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace onepass
