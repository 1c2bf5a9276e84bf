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
  TcpConnection* existing = nullptr;
  EXPECT_EQ(t.Insert(Key(1, 1), &existing), TcpTableInsert::kExists);
  EXPECT_EQ(existing, c);  // find-or-insert: the connection the key has
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
    const size_t home = t.Home(Key(9, port));
    TcpConnection* c = t.Find(Key(9, port), home);
    ASSERT_EQ(c != nullptr, model.count(port) == 1) << step;
    // After a miss: the endpoint's way (InsertAbsent with the hash Find used) or Insert's.
    const TcpTableInsert inserted = c != nullptr    ? TcpTableInsert::kExists
                                    : step % 2 != 0 ? t.InsertAbsent(Key(9, port), home, &c)
                                                    : t.Insert(Key(9, port), &c);
    if (inserted == TcpTableInsert::kExists) {
      ASSERT_EQ(c, model[port]);
      t.Erase(c);
      model.erase(port);
    } else if (inserted == TcpTableInsert::kOk) {
      ASSERT_EQ(t.Find(Key(9, port)), c) << step;
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

// ForEachExpired walks the connections in use (not every slot): after inserts and erases in
// any order it visits exactly the live connections whose deadline has passed, each once.
TEST(TcpTable, ExpiredAreExactlyTheLiveOnesPastTheirDeadline) {
  TcpTable t({.max_connections = 64, .per_client_max = 64});
  std::map<uint16_t, uint64_t> model;  // port -> deadline
  std::mt19937 rng(7);
  for (int step = 0; step < 5000; ++step) {
    auto port = static_cast<uint16_t>(rng() % 80);
    if (TcpConnection* c = t.Find(Key(9, port)); c != nullptr) {
      t.Erase(c);
      model.erase(port);
    } else if (model.size() < 64) {
      ASSERT_EQ(t.Insert(Key(9, port), &c), TcpTableInsert::kOk);
      c->deadline_ms = rng() % 1000;
      model[port] = c->deadline_ms;
    }
    const uint64_t now = rng() % 1000;
    std::map<uint16_t, int> seen;
    t.ForEachExpired(now, [&seen](TcpConnection& c) { ++seen[c.key.peer_port]; });
    std::map<uint16_t, int> want;
    for (const auto& [p, deadline] : model) {
      if (deadline <= now) want[p] = 1;
    }
    ASSERT_EQ(seen, want) << step;
  }
}

// A slot's next connection starts from defaults but keeps the request and response buffers:
// nothing is allocated per connection once every slot has served one.
TEST(TcpTable, AReusedSlotKeepsItsBuffersAndNothingElse) {
  TcpTable t({.max_connections = 1, .per_client_max = 1});
  TcpConnection* c = nullptr;
  ASSERT_EQ(t.Insert(Key(1, 1), &c), TcpTableInsert::kOk);
  c->request.assign(100, 1);
  c->response.assign(1000, 2);
  c->deadline_ms = 5;
  c->snd_nxt = 7;
  c->fin_queued = true;
  const uint8_t* request = c->request.data();
  const size_t request_capacity = c->request.capacity();
  const uint8_t* response = c->response.data();
  const size_t response_capacity = c->response.capacity();
  t.Erase(c);
  ASSERT_EQ(t.Insert(Key(2, 2), &c), TcpTableInsert::kOk);
  EXPECT_TRUE(c->key == Key(2, 2));
  EXPECT_EQ(c->deadline_ms, 0u);
  EXPECT_EQ(c->snd_nxt, 0u);
  EXPECT_FALSE(c->fin_queued);
  EXPECT_TRUE(c->request.empty());
  EXPECT_TRUE(c->response.empty());
  EXPECT_EQ(c->request.data(), request);
  EXPECT_EQ(c->request.capacity(), request_capacity);
  EXPECT_EQ(c->response.data(), response);
  EXPECT_EQ(c->response.capacity(), response_capacity);
}

TEST(TcpTable, AReusedSlotGivesBackABufferThatGrewLarge) {
  TcpTable t({.max_connections = 1, .per_client_max = 1});
  TcpConnection* c = nullptr;
  ASSERT_EQ(t.Insert(Key(1, 1), &c), TcpTableInsert::kOk);
  c->response.assign(64 * 1024, 0);
  t.Erase(c);
  ASSERT_EQ(t.Insert(Key(1, 1), &c), TcpTableInsert::kOk);
  EXPECT_TRUE(c->response.empty());
  EXPECT_LE(c->response.capacity(), TcpConnection::kKeptBufferBytes);
}

}  // namespace
}  // namespace onepass::xdp
