#include "server/xdp/tcp/syn_cookie.h"

#include <gtest/gtest.h>

namespace onepass::xdp {
namespace {

FlowKey Key() {
  FlowKey k;
  k.peer = {192, 0, 2, 1};
  k.local = {192, 0, 2, 53};
  k.peer_port = 40000;
  k.local_port = 53;
  return k;
}

TEST(SynCookies, RoundTripsMssAndRejectsOthers) {
  SynCookies c(CookieKey{1, 2, 3});
  uint32_t isn = c.Make(Key(), 1000, 1460, 5'000);
  EXPECT_EQ(c.Check(Key(), 1000, isn, 5'000), 1460);
  EXPECT_EQ(c.Check(Key(), 1000, isn, 5'000 + kCookieSlotMs), 1460);  // the next slot
  EXPECT_FALSE(c.Check(Key(), 1000, isn, 5'000 + 2 * kCookieSlotMs));
  EXPECT_FALSE(c.Check(Key(), 1001, isn, 5'000));
  EXPECT_FALSE(c.Check(Key(), 1000, isn ^ 0x100, 5'000));
  FlowKey other = Key();
  other.peer_port = 40001;
  EXPECT_FALSE(c.Check(other, 1000, isn, 5'000));
  EXPECT_EQ(c.Check(Key(), 7, c.Make(Key(), 7, 1300, 0), 0), 1220);
  EXPECT_EQ(c.Check(Key(), 7, c.Make(Key(), 7, 100, 0), 0), 536);
}

TEST(SynCookies, TwoKeysRotate) {
  SynCookies c(CookieKey{1});
  uint32_t isn = c.Make(Key(), 1, 1460, 0);
  c.Rotate(CookieKey{2});
  EXPECT_TRUE(c.Check(Key(), 1, isn, 0));
  c.Rotate(CookieKey{3});
  EXPECT_FALSE(c.Check(Key(), 1, isn, 0));
}

}  // namespace
}  // namespace onepass::xdp
