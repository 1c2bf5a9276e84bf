#include "loadtest/source_addresses.h"

#include <sys/socket.h>

#include "gtest/gtest.h"

namespace onepass::load {
namespace {

TEST(SourceAddressesTest, ExpandsRangesAndLists) {
  auto list = ParseSourceList("127.0.0.2-127.0.0.4, 127.0.1.1");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 4u);
  EXPECT_EQ((*list)[0].ToString(false), "127.0.0.2");
  EXPECT_EQ((*list)[2].ToString(false), "127.0.0.4");
  EXPECT_EQ((*list)[3].ToString(false), "127.0.1.1");
  auto wide = ParseSourceList("127.0.0.2-127.0.1.1");
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->size(), 256u);
  auto v6 = ParseSourceList("fd00::1-fd00::3");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->back().ToString(false), "fd00::3");
}

TEST(SourceAddressesTest, RejectsBadLists) {
  EXPECT_FALSE(ParseSourceList("127.0.0.5-127.0.0.1").ok());
  EXPECT_FALSE(ParseSourceList("127.0.0.1-::1").ok());
  EXPECT_FALSE(ParseSourceList("fd00::1-fd01::1").ok());
  EXPECT_FALSE(ParseSourceList("nonsense").ok());
  EXPECT_FALSE(ParseSourceList("").ok());
  EXPECT_FALSE(ParseSourceList("10.0.0.0-10.255.255.255", 1000).ok());
}

}  // namespace
}  // namespace onepass::load
