#include "server/xdp/tcp/tcp_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace onepass::xdp {
namespace {

FlowKey Key(uint8_t peer, uint16_t port) {
  FlowKey k;
  k.peer = {10, 0, 0, peer};
  k.local = {10, 0, 0, 1};
  k.peer_port = port;
  k.local_port = 53;
  return k;
}

TEST(TcpTable, LimitsTotalAndPerClient) {
  TcpTable t({.max_connections = 4, .per_client_max = 2});
  TcpConnection* c = nullptr;
  EXPECT_EQ(t.Insert(Key(1, 1), &c), TcpTableInsert::kOk);
  EXPECT_EQ(t.Insert(Key(1, 1), &c), TcpTableInsert::kExists);
  EXPECT_EQ(t.Insert(Key(1, 2), &c), TcpTableInsert::kOk);
  EXPECT_EQ(t.Insert(Key(1, 3), &c), TcpTableInsert::kPerClientLimited);
  EXPECT_EQ(t.Insert(Key(2, 1), &c), TcpTableInsert::kOk);
  EXPECT_EQ(t.Insert(Key(3, 1), &c), TcpTableInsert::kOk);
  EXPECT_EQ(t.Insert(Key(4, 1), &c), TcpTableInsert::kFull);
  t.Erase(t.Find(Key(1, 1)));
  EXPECT_EQ(t.Find(Key(1, 1)), nullptr);
  EXPECT_EQ(t.Insert(Key(1, 3), &c), TcpTableInsert::kOk);
  EXPECT_EQ(t.size(), 4u);
}

TEST(TcpTable, RandomInsertEraseMatchesAModel) {
  TcpTable t({.max_connections = 64, .per_client_max = 64});
  std::map<uint16_t, TcpConnection*> model;
  std::mt19937 rng(1);
  for (int step = 0; step < 20000; ++step) {
    auto port = static_cast<uint16_t>(rng() % 100);
    TcpConnection* c = t.Find(Key(9, port));
    ASSERT_EQ(c != nullptr, model.count(port) == 1) << step;
    if (c != nullptr) {
      ASSERT_EQ(c, model[port]);
      t.Erase(c);
      model.erase(port);
    } else if (t.Insert(Key(9, port), &c) == TcpTableInsert::kOk) {
      model[port] = c;
    } else {
      ASSERT_EQ(model.size(), 64u);
    }
    ASSERT_EQ(t.size(), model.size());
  }
}

TEST(TcpTable, ExpiredByDeadline) {
  TcpTable t({.max_connections = 4, .per_client_max = 4});
  TcpConnection* c = nullptr;
  ASSERT_EQ(t.Insert(Key(1, 1), &c), TcpTableInsert::kOk);
  c->deadline_ms = 100;
  ASSERT_EQ(t.Insert(Key(1, 2), &c), TcpTableInsert::kOk);
  c->deadline_ms = 300;
  int n = 0;
  t.ForEachExpired(200, [&n](TcpConnection&) { ++n; });
  EXPECT_EQ(n, 1);
}

}  // namespace
}  // namespace onepass::xdp
