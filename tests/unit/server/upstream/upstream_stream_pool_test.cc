// The stream path's connection pool against a TCP upstream inside the test (a thread on a
// loopback port): reuse, pipelining on up to N connections with answers out of order,
// reconnection after the upstream closes, the idle and io timeouts, refused connects, bad
// frames. The worker's event loop is pumped by the test, bounded in time.
#include "server/upstream/upstream_stream_pool.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/drivers/libevent/libevent_driver.h"

namespace onepass {
namespace {

ptrdiff_t TwoByteFrameLength(absl::Span<const uint8_t> bytes) {
  if (bytes.size() < 2) return 0;
  const size_t length = (size_t{bytes[0]} << 8) | bytes[1];
  if (length == 0) return -1;
  return bytes.size() < 2 + length ? 0 : static_cast<ptrdiff_t>(2 + length);
}

// The key of a request and its answer (the echo): the payload's first byte.
uint64_t FirstByteKey(absl::Span<const uint8_t> frame) { return frame.size() > 2 ? frame[2] : 256; }

std::string Frame(const std::string& payload) {
  return std::string{static_cast<char>(payload.size() >> 8),
                     static_cast<char>(payload.size() & 0xff)} +
         payload;
}

// What the fake upstream does with the frames it reads on a connection.
enum class Behavior {
  kEcho,                  // each frame back at once
  kReversePairs,          // frames two at a time, answered in reverse order
  kEchoThenClose,         // the first frame back, then close
  kSilent,                // read, never answer
  kInvalidAnswer,         // answer with a zero-length frame (the framer rejects it)
  kCloseFirstConnection,  // the first connection: read a frame, close; later ones: echo
  kCloseUnanswered,       // read a frame, close without answering, on every connection
};

// A TCP upstream on 127.0.0.1 at a free port, served by one thread with poll (200 ms steps),
// stopped and joined by the destructor.
class FakeStreamUpstream {
 public:
  explicit FakeStreamUpstream(Behavior behavior) : behavior_(behavior) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(listener_, 16), 0);
    socklen_t length = sizeof(address);
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeStreamUpstream() {
    stop_ = true;
    thread_.join();
    for (int fd : connections_) close(fd);
    close(listener_);
  }
  int port() const { return port_; }
  std::atomic<int> accepted{0};
  std::atomic<int> frames{0};

 private:
  struct Peer {
    int fd;
    std::string in;
    std::vector<std::string> held;
  };
  void Serve() {
    std::vector<Peer> peers;
    while (!stop_) {
      std::vector<pollfd> fds = {{listener_, POLLIN, 0}};
      for (const Peer& peer : peers) fds.push_back({peer.fd, POLLIN, 0});
      if (poll(fds.data(), fds.size(), 200) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          ++accepted;
          connections_.push_back(fd);
          peers.push_back({fd, "", {}});
        }
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        Peer& peer = peers[i - 1];
        char buffer[4096];
        const ssize_t n = recv(peer.fd, buffer, sizeof(buffer), 0);
        if (n <= 0) {
          peer.fd = -1;
          continue;
        }
        peer.in.append(buffer, static_cast<size_t>(n));
        while (peer.in.size() >= 2) {
          const size_t length =
              (size_t{static_cast<uint8_t>(peer.in[0])} << 8) | static_cast<uint8_t>(peer.in[1]);
          if (peer.in.size() < 2 + length) break;
          std::string frame = peer.in.substr(0, 2 + length);
          peer.in.erase(0, 2 + length);
          ++frames;
          Answer(peer, frame);
        }
      }
      peers.erase(
          std::remove_if(peers.begin(), peers.end(), [](const Peer& p) { return p.fd < 0; }),
          peers.end());
    }
  }
  void Answer(Peer& peer, const std::string& frame) {
    switch (behavior_) {
      case Behavior::kEcho:
        send(peer.fd, frame.data(), frame.size(), MSG_NOSIGNAL);
        break;
      case Behavior::kReversePairs:
        peer.held.push_back(frame);
        if (peer.held.size() == 2) {
          const std::string both = peer.held[1] + peer.held[0];
          send(peer.fd, both.data(), both.size(), MSG_NOSIGNAL);
          peer.held.clear();
        }
        break;
      case Behavior::kEchoThenClose:
        send(peer.fd, frame.data(), frame.size(), MSG_NOSIGNAL);
        shutdown(peer.fd, SHUT_RDWR);
        peer.fd = -1;  // closed by the destructor
        break;
      case Behavior::kSilent:
        break;
      case Behavior::kInvalidAnswer:
        send(peer.fd, "\0\0", 2, MSG_NOSIGNAL);
        break;
      case Behavior::kCloseFirstConnection:
        if (peer.fd != connections_.front()) {
          send(peer.fd, frame.data(), frame.size(), MSG_NOSIGNAL);
          break;
        }
        [[fallthrough]];
      case Behavior::kCloseUnanswered:
        shutdown(peer.fd, SHUT_RDWR);
        peer.fd = -1;  // closed by the destructor
        break;
    }
  }

  const Behavior behavior_;
  int listener_ = -1;
  int port_ = 0;
  std::vector<int> connections_;  // the serving thread's; closed after it is joined
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

SocketAddress Loopback(int port) {
  SocketAddress address;
  auto* in = reinterpret_cast<sockaddr_in*>(&address.storage);
  in->sin_family = AF_INET;
  in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  in->sin_port = htons(static_cast<uint16_t>(port));
  address.length = sizeof(sockaddr_in);
  return address;
}

class StreamPoolTest : public ::testing::Test {
 protected:
  StreamPoolTest() : driver_(*LibeventDriver::Create(&timers_, {}, 1, 1)) {}

  void Make(int port, int connections = 2, absl::Duration idle = absl::Seconds(10),
            absl::Duration io = absl::Seconds(2),
            UpstreamStreamConfig::RequestKey key = &FirstByteKey) {
    UpstreamStreamConfig config;
    config.request_key = key;
    config.frame_length = &TwoByteFrameLength;
    config.max_frame_bytes = 2 + 65535;
    config.connections = connections;
    config.idle_timeout = idle;
    config.io_timeout = io;
    pool_ = std::make_unique<UpstreamStreamPool>(
        driver_.get(), std::vector<SocketAddress>{Loopback(port)}, config, &stats_,
        [this](int upstream, absl::Span<const uint8_t> frame) {
          EXPECT_EQ(upstream, expected_upstream_);
          received_.emplace_back(frame.begin(), frame.end());
        });
  }
  bool Send(const std::string& payload) {
    const std::string frame = Frame(payload);
    return pool_->Send(0, {reinterpret_cast<const uint8_t*>(frame.data()), frame.size()});
  }
  // Runs the event loop until `done` or `limit`.
  bool RunUntil(const std::function<bool()>& done, absl::Duration limit = absl::Seconds(3)) {
    const absl::Time give_up = absl::Now() + limit;
    while (!done() && absl::Now() < give_up) {
      driver_->RunOnce();
      absl::SleepFor(absl::Milliseconds(1));
    }
    return done();
  }
  uint64_t Stat(const std::atomic<uint64_t>& counter) const { return counter.load(); }

  TimerQueue timers_;
  std::unique_ptr<LibeventDriver> driver_;
  WorkerStats stats_;
  std::unique_ptr<UpstreamStreamPool> pool_;
  std::vector<std::string> received_;
  int expected_upstream_ = 0;  // the index answers come from
};

TEST_F(StreamPoolTest, SequentialRequestsReuseOneConnection) {
  FakeStreamUpstream upstream(Behavior::kEcho);
  Make(upstream.port());
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(Send("request " + std::to_string(i)));
    ASSERT_TRUE(RunUntil([&] { return received_.size() == static_cast<size_t>(i) + 1; }));
    EXPECT_EQ(received_.back(), Frame("request " + std::to_string(i)));
  }
  EXPECT_EQ(upstream.accepted, 1);
  EXPECT_EQ(pool_->open_connections(0), 1);
  EXPECT_EQ(Stat(stats_.upstream_stream_connects), 1u);
  EXPECT_EQ(Stat(stats_.upstream_stream_sent), 5u);
  EXPECT_EQ(Stat(stats_.upstream_stream_received), 5u);
}

// A reload's upstreams (SetUpstreams): the same address keeps its open connection; a vacated
// index has its connections closed and refuses requests (counted); a new index connects on
// its first request.
TEST_F(StreamPoolTest, SetUpstreamsKeepsTheSameAddressAndClosesAVacatedOne) {
  FakeStreamUpstream upstream(Behavior::kEcho);
  Make(upstream.port());
  ASSERT_TRUE(Send("first"));
  ASSERT_TRUE(RunUntil([&] { return received_.size() == 1; }));
  pool_->SetUpstreams({Loopback(upstream.port())});
  EXPECT_EQ(pool_->open_connections(0), 1);
  ASSERT_TRUE(Send("again"));
  ASSERT_TRUE(RunUntil([&] { return received_.size() == 2; }));
  EXPECT_EQ(upstream.accepted, 1) << "a kept upstream's connection was reopened";

  pool_->SetUpstreams({SocketAddress(), Loopback(upstream.port())});
  EXPECT_EQ(pool_->open_connections(0), 0);
  const uint64_t errors = Stat(stats_.upstream_stream_send_errors);
  EXPECT_FALSE(Send("to nobody"));
  EXPECT_EQ(Stat(stats_.upstream_stream_send_errors), errors + 1);
  const std::string frame = Frame("new index");
  expected_upstream_ = 1;
  EXPECT_TRUE(pool_->Send(1, {reinterpret_cast<const uint8_t*>(frame.data()), frame.size()}));
  EXPECT_TRUE(RunUntil([&] { return received_.size() == 3; }));
  EXPECT_EQ(received_.back(), frame);
  EXPECT_EQ(pool_->open_connections(1), 1);
}

TEST_F(StreamPoolTest, BurstPipelinesOnAtMostNConnectionsAnswersInAnyOrder) {
  FakeStreamUpstream upstream(Behavior::kReversePairs);
  Make(upstream.port(), /*connections=*/2);
  std::set<std::string> sent;
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(Send("q" + std::to_string(i)));
    sent.insert(Frame("q" + std::to_string(i)));
  }
  ASSERT_TRUE(RunUntil([&] { return received_.size() == 8; }));
  EXPECT_EQ(std::set<std::string>(received_.begin(), received_.end()), sent);
  EXPECT_EQ(upstream.accepted, 2);  // a second opened while the first was busy; no third
  EXPECT_EQ(pool_->open_connections(0), 2);
}

TEST_F(StreamPoolTest, ReconnectsAfterTheUpstreamClosed) {
  FakeStreamUpstream upstream(Behavior::kEchoThenClose);
  Make(upstream.port(), /*connections=*/1);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Send("again"));
    ASSERT_TRUE(RunUntil([&] { return received_.size() == static_cast<size_t>(i) + 1; }));
    ASSERT_TRUE(RunUntil([&] { return pool_->open_connections(0) == 0; }));  // saw the EOF
  }
  EXPECT_EQ(upstream.accepted, 3);
  EXPECT_EQ(Stat(stats_.upstream_stream_lost), 0u);  // each closed with nothing outstanding
  EXPECT_EQ(Stat(stats_.upstream_stream_resent), 0u) << "answered requests are not resent";
  EXPECT_EQ(received_.size(), 3u);
}

TEST_F(StreamPoolTest, RequestsABrokenConnectionLostAreSentOnceMoreOnANewOne) {
  FakeStreamUpstream upstream(Behavior::kCloseFirstConnection);
  Make(upstream.port(), /*connections=*/1);
  ASSERT_TRUE(Send("a lost"));
  ASSERT_TRUE(Send("b lost"));
  ASSERT_TRUE(RunUntil([&] { return received_.size() == 2; }));
  EXPECT_EQ(std::set<std::string>(received_.begin(), received_.end()),
            (std::set<std::string>{Frame("a lost"), Frame("b lost")}));
  EXPECT_EQ(upstream.accepted, 2);
  EXPECT_EQ(Stat(stats_.upstream_stream_lost), 1u);
  EXPECT_EQ(Stat(stats_.upstream_stream_resent), 2u);
  EXPECT_EQ(Stat(stats_.upstream_stream_resend_lost), 0u);
  EXPECT_EQ(Stat(stats_.upstream_stream_sent), 4u);
}

TEST_F(StreamPoolTest, ARequestLostTwiceIsNotSentAThirdTime) {
  FakeStreamUpstream upstream(Behavior::kCloseUnanswered);
  Make(upstream.port(), /*connections=*/1);
  ASSERT_TRUE(Send("doomed"));
  ASSERT_TRUE(RunUntil([&] { return Stat(stats_.upstream_stream_resend_lost) == 1; }));
  ASSERT_TRUE(RunUntil([&] { return pool_->open_connections(0) == 0; }));
  RunUntil([] { return false; }, absl::Milliseconds(300));  // time for a third, were one made
  EXPECT_EQ(upstream.accepted, 2);
  EXPECT_EQ(upstream.frames, 2);
  EXPECT_EQ(Stat(stats_.upstream_stream_resent), 1u);
  EXPECT_TRUE(received_.empty());
}

TEST_F(StreamPoolTest, RequestsKeptForAResendAreBoundedAndForgottenWhenAnswered) {
  FakeStreamUpstream silent(Behavior::kSilent);
  Make(silent.port(), /*connections=*/1, absl::Seconds(10), /*io=*/absl::Seconds(20));
  ASSERT_TRUE(Send("first"));
  ASSERT_TRUE(RunUntil([&] { return silent.frames == 1; }));  // open and sent
  // 60000-byte requests with distinct keys, sent as the socket takes them.
  int sent = 1;
  for (int i = 0; i < 40; ++i) {
    sent += Send(std::string(1, static_cast<char>('A' + i)) + std::string(59999, 'x'));
    RunUntil([&] { return silent.frames == sent; }, absl::Milliseconds(500));
  }
  EXPECT_GT(sent, 20) << "enough requests to pass the bound";
  EXPECT_GT(pool_->kept_bytes(0), UpstreamStreamPool::kMaxKeptBytes - 60002);
  EXPECT_LE(pool_->kept_bytes(0), UpstreamStreamPool::kMaxKeptBytes);

  FakeStreamUpstream echo(Behavior::kEcho);
  Make(echo.port(), 1);
  ASSERT_TRUE(Send("a"));
  ASSERT_TRUE(Send("b"));
  ASSERT_TRUE(RunUntil([&] { return received_.size() == 2; }));
  EXPECT_EQ(pool_->kept_bytes(0), 0u) << "answered: nothing left to resend";
}

TEST_F(StreamPoolTest, WithoutARequestKeyNothingIsResent) {
  FakeStreamUpstream upstream(Behavior::kCloseFirstConnection);
  Make(upstream.port(), 1, absl::Seconds(10), absl::Seconds(2), /*key=*/nullptr);
  ASSERT_TRUE(Send("lost for good"));
  ASSERT_TRUE(RunUntil([&] { return Stat(stats_.upstream_stream_lost) == 1; }));
  RunUntil([] { return false; }, absl::Milliseconds(300));  // time for a resend, were one made
  EXPECT_EQ(upstream.accepted, 1);
  EXPECT_EQ(Stat(stats_.upstream_stream_resent), 0u);
  EXPECT_TRUE(received_.empty());
}

TEST_F(StreamPoolTest, IdleConnectionClosedAfterIdleTimeout) {
  FakeStreamUpstream upstream(Behavior::kEcho);
  Make(upstream.port(), 2, /*idle=*/absl::Milliseconds(100));
  ASSERT_TRUE(Send("x"));
  ASSERT_TRUE(RunUntil([&] { return received_.size() == 1; }));
  EXPECT_EQ(pool_->open_connections(0), 1);
  ASSERT_TRUE(RunUntil([&] { return pool_->open_connections(0) == 0; }));
  EXPECT_EQ(Stat(stats_.upstream_stream_idle_closes), 1u);
}

TEST_F(StreamPoolTest, SilentUpstreamCutAfterIoTimeoutRequestsLost) {
  FakeStreamUpstream upstream(Behavior::kSilent);
  Make(upstream.port(), 2, absl::Seconds(10), /*io=*/absl::Milliseconds(150));
  ASSERT_TRUE(Send("never answered"));
  ASSERT_TRUE(RunUntil([&] { return upstream.frames == 1; }));
  ASSERT_TRUE(RunUntil([&] { return pool_->open_connections(0) == 0; }));
  EXPECT_EQ(Stat(stats_.upstream_stream_lost), 1u);
  EXPECT_EQ(Stat(stats_.upstream_stream_resent), 0u) << "a silent upstream is slow, not gone";
  EXPECT_EQ(upstream.accepted, 1);
  EXPECT_TRUE(received_.empty());
}

TEST_F(StreamPoolTest, FrameTheFramerRejectsClosesTheConnection) {
  FakeStreamUpstream upstream(Behavior::kInvalidAnswer);
  Make(upstream.port());
  ASSERT_TRUE(Send("x"));
  // Lost on the first connection, resent, lost on the second: given up.
  ASSERT_TRUE(RunUntil([&] { return Stat(stats_.upstream_stream_resend_lost) == 1; }));
  EXPECT_EQ(Stat(stats_.upstream_stream_lost), 2u);
  EXPECT_EQ(pool_->open_connections(0), 0);
  EXPECT_TRUE(received_.empty());
}

TEST_F(StreamPoolTest, RefusedConnectCountedAndTheNextRequestTriesAgain) {
  // A port nobody listens on: bound, then closed.
  const int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  socklen_t length = sizeof(address);
  getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
  close(probe);
  Make(ntohs(address.sin_port), 1);
  Send("x");  // may fail at once or once the refusal is read
  ASSERT_TRUE(RunUntil([&] { return Stat(stats_.upstream_stream_connect_errors) >= 1; }));
  ASSERT_TRUE(RunUntil([&] { return pool_->open_connections(0) == 0; }));
  const uint64_t errors = Stat(stats_.upstream_stream_connect_errors);  // 2 with the resend
  Send("y");
  ASSERT_TRUE(RunUntil([&] { return Stat(stats_.upstream_stream_connect_errors) > errors; }));
  EXPECT_EQ(Stat(stats_.upstream_stream_connects), 0u);
}

TEST_F(StreamPoolTest, UnsentBytesAreBounded) {
  FakeStreamUpstream upstream(Behavior::kSilent);
  Make(upstream.port(), 1);
  // Queued while connecting: the bound applies before any byte can leave.
  const std::string big(60000, 'b');
  int accepted = 0;
  for (int i = 0; i < 10; ++i) accepted += Send(big);
  EXPECT_EQ(accepted, static_cast<int>(UpstreamStreamPool::kMaxUnsentBytes / (big.size() + 2)));
  EXPECT_EQ(Stat(stats_.upstream_stream_send_errors), 10u - accepted);
}

}  // namespace
}  // namespace onepass
