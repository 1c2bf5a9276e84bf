// The operations listener (server/ops/metrics_server.h) against slow peers: one deadline per
// exchange that a byte now and then does not extend, a full table that gives the oldest slow
// peer's slot to a new connection, and, end to end, onepassd's /healthz answering curl within
// 1 s while 20 slowloris connections (idle, or one byte every 3 s, reconnecting when closed)
// are held against its 16 slots.
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/ops/metrics_server.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

using testing::RunCommand;
using testing::ServerProcess;
using testing::TcpClient;
using testing::WaitFor;

// The start of a request head that a slow peer never finishes.
constexpr absl::string_view kSlowHead = "GET /healthz HTTP/1.1\r\nX-Slow: ";

// True once the server has closed (or reset) the connection; never blocks.
bool ClosedByPeer(const TcpClient& client) {
  pollfd p{.fd = client.fd(), .events = POLLIN | POLLRDHUP, .revents = 0};
  if (poll(&p, 1, 0) <= 0) return false;
  if (p.revents & (POLLHUP | POLLERR | POLLRDHUP)) return true;
  char byte;
  return recv(client.fd(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

std::unique_ptr<MetricsServer> StartOps(MetricsServerOptions options) {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server = MetricsServer::Create(
      *ParseSocketAddress("127.0.0.1:0"),
      [](absl::string_view, absl::string_view) { return HttpReply{.body = "ok\n"}; }, options);
  if (!server.ok()) {
    ADD_FAILURE() << server.status();
    return nullptr;
  }
  (*server)->Start();
  return *std::move(server);
}

// A peer sending one byte of its head every 100 ms is closed at the exchange deadline, not
// kept while the bytes keep coming (libevent re-arms a persistent event's timeout on every
// read: that is what let a peer hold a slot for ever).
TEST(OpsListenerTest, DeadlineHoldsForTheWholeExchange) {
  std::unique_ptr<MetricsServer> ops = StartOps({.exchange_timeout = absl::Milliseconds(700)});
  ASSERT_NE(ops, nullptr);
  absl::StatusOr<TcpClient> slow = TcpClient::Connect("127.0.0.1", ops->address().port());
  ASSERT_TRUE(slow.ok()) << slow.status();
  ASSERT_TRUE(slow->Send(kSlowHead).ok());
  const absl::Time start = absl::Now();
  bool closed = false;
  // Bounded: 5 s, seven times the deadline.
  while (!closed && absl::Now() - start < absl::Seconds(5)) {
    closed = WaitFor([&] { return ClosedByPeer(*slow); }, absl::Milliseconds(100));
    if (!closed) (void)slow->Send("a");  // the next byte, 100 ms after the last
  }
  EXPECT_TRUE(closed) << "still open after " << absl::Now() - start << " of one byte per 100 ms";
  absl::StatusOr<std::string> rest = slow->ReadUntilClose(absl::Seconds(1));
  if (rest.ok()) {
    EXPECT_EQ(*rest, "");  // closed without a reply: the head never ended
  }
}

// A full table: a probe whose request is there at accept is answered at once, closing no one; a
// new connection that must wait takes the slot of the oldest one still reading, the newer stay.
TEST(OpsListenerTest, FullTableEvictsTheOldestSlowPeer) {
  constexpr int kSlots = 4;
  std::unique_ptr<MetricsServer> ops =
      StartOps({.max_connections = kSlots, .exchange_timeout = absl::Seconds(30)});
  ASSERT_NE(ops, nullptr);
  const int port = ops->address().port();
  // A byte each, never a whole head. The kernel's accept queue keeps the connect order, so the
  // listener takes them in this order, and each probe after them.
  std::vector<TcpClient> slow;
  auto add_slow = [&] {
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port);
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE(client->Send("G").ok());
    slow.push_back(*std::move(client));
  };
  for (int i = 0; i < kSlots; ++i) add_slow();
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round));
    // A probe whose request has arrived by accept is answered in that pass: it needs no slot,
    // and closes no one.
    absl::StatusOr<TcpClient> probe = TcpClient::Connect("127.0.0.1", port);
    ASSERT_TRUE(probe.ok()) << probe.status();
    ASSERT_TRUE(probe->Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").ok());
    absl::StatusOr<std::string> reply = probe->ReadUntilClose(absl::Seconds(2));
    ASSERT_TRUE(reply.ok()) << reply.status();
    EXPECT_TRUE(absl::StartsWith(*reply, "HTTP/1.1 200")) << *reply;
    for (size_t i = round; i < slow.size(); ++i) EXPECT_FALSE(ClosedByPeer(slow[i])) << i;
    // One more slow peer must wait in the table: it takes the slot of slow[round], the oldest
    // still reading; the newer ones stay.
    add_slow();
    EXPECT_TRUE(WaitFor([&] { return ClosedByPeer(slow[round]); }, absl::Seconds(2)));
    for (size_t i = round + 1; i < slow.size(); ++i) EXPECT_FALSE(ClosedByPeer(slow[i])) << i;
  }
}

// Hostile peers that keep 20 connections open against the 16 slots, half of them idle and half
// sending one byte every 3 s, and reopening any the server closes.
class Slowloris {
 public:
  Slowloris(int port, int connections) : port_(port), slots_(connections) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Slowloris() {
    stop_ = true;
    thread_.join();
  }
  int open() const { return open_.load(); }
  int reopened() const { return reopened_.load(); }

 private:
  struct Slot {
    std::unique_ptr<TcpClient> client;
    absl::Time last_byte;
  };
  void Run() {
    const absl::Time give_up = absl::Now() + absl::Seconds(60);  // bounded
    while (!stop_.load() && absl::Now() < give_up) {
      int open = 0;
      for (size_t i = 0; i < slots_.size(); ++i) {
        Slot& slot = slots_[i];
        if (slot.client != nullptr && ClosedByPeer(*slot.client)) {
          slot.client.reset();
          ++reopened_;
        }
        if (slot.client == nullptr) {
          absl::StatusOr<TcpClient> client =
              TcpClient::Connect("127.0.0.1", port_, absl::Seconds(1));
          if (!client.ok()) continue;
          slot.client = std::make_unique<TcpClient>(*std::move(client));
          slot.last_byte = absl::InfinitePast();
        }
        const bool dribbles = i % 2 == 1;
        if (dribbles && absl::Now() - slot.last_byte >= absl::Seconds(3)) {
          (void)slot.client->Send(slot.last_byte == absl::InfinitePast() ? "G" : "E",
                                  absl::Milliseconds(100));
          slot.last_byte = absl::Now();
        }
        ++open;
      }
      open_ = open;
      absl::SleepFor(absl::Milliseconds(20));  // the attack's own pace, not a wait
    }
  }

  const int port_;
  std::vector<Slot> slots_;
  std::atomic<bool> stop_{false};
  std::atomic<int> open_{0};
  std::atomic<int> reopened_{0};
  std::thread thread_;
};

// onepassd's /healthz answers curl within 1 s, again and again for 4 s (past a dribbler's 3 s
// byte), while 20 slow connections are held against the 16 slots.
TEST(OpsListenerTest, HealthzAnswersCurlWithinOneSecondUnderSlowloris) {
  if (!testing::ProgramExists("curl")) GTEST_SKIP() << "needs curl";
  auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers",
                                      "1", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string metrics = (*server)->metrics_address();
  const int port = std::stoi(metrics.substr(metrics.rfind(':') + 1));
  constexpr int kAttackers = kMaxOpsConnections + 4;
  Slowloris attack(port, kAttackers);
  ASSERT_TRUE(WaitFor([&] { return attack.open() == kAttackers; }, absl::Seconds(5)));

  const absl::Time start = absl::Now();
  int probes = 0;
  while (absl::Now() - start < absl::Seconds(4) || probes < 5) {  // bounded: curl's 1 s each
    // --max-time 1: curl fails (exit 28) if the whole exchange takes longer.
    absl::StatusOr<testing::CommandResult> curl =
        RunCommand({"curl", "-sS", "--max-time", "1", "-w", "\n%{http_code}",
                    absl::StrCat("http://", metrics, "/healthz")},
                   absl::Seconds(5));
    ASSERT_TRUE(curl.ok()) << curl.status();
    ASSERT_EQ(curl->exit_code, 0) << "probe " << probes << ": " << curl->err;
    EXPECT_EQ(curl->out, "ok\n\n200");
    ++probes;
  }
  // The attack was on all along: its connections were held, and only some ever lost a slot.
  EXPECT_GE(attack.open(), kMaxOpsConnections);
  EXPECT_GT(attack.reopened(), 0);
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string log = (*server)->ReadStderr();
  EXPECT_TRUE(absl::StrContains(log, "--metrics-listen: all 16 connections taken")) << log;
}

}  // namespace
}  // namespace onepass
