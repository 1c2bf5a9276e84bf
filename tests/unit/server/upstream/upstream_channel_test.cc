// The datagram path's source ports (RFC 5452 §9.2) against a UDP upstream inside the test: a
// fresh kernel-chosen port per request, a reply taken only on the port its request left from
// and only once, ports closed after their reply or their linger time, and sharing at the cap.
// The worker's event loop is pumped by the test, bounded in time.
#include "server/upstream/upstream_channel.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/drivers/libevent/libevent_driver.h"

namespace onepass {
namespace {

// The key of a request and its reply: the first byte.
uint64_t FirstByteKey(absl::Span<const uint8_t> datagram) {
  return datagram.empty() ? 256 : datagram[0];
}

SocketAddress Loopback(int port) {
  return *ParseSocketAddress(absl::StrCat("127.0.0.1:", port), {.what = "test"});
}

// What the upstream read: the payload and the port it came from.
struct Request {
  std::string payload;
  uint16_t port = 0;
};

class ChannelTest : public ::testing::Test {
 protected:
  ChannelTest() : driver_(*LibeventDriver::Create(&timers_, {}, 1, 1)) {
    upstream_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(upstream_fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
        getsockname(upstream_fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      upstream_port_ = ntohs(address.sin_port);
    }
  }
  ~ChannelTest() override {
    channel_.reset();
    close(upstream_fd_);
  }

  void Make(UpstreamDatagramConfig config) {
    ASSERT_GT(upstream_port_, 0);
    auto channel =
        UpstreamChannel::Open(driver_.get(), {Loopback(upstream_port_)}, config, &stats_,
                              [this](int upstream, absl::Span<const uint8_t> datagram) {
                                EXPECT_EQ(upstream, 0);
                                delivered_.emplace_back(datagram.begin(), datagram.end());
                              });
    ASSERT_TRUE(channel.ok()) << channel.status();
    channel_ = *std::move(channel);
  }
  void Send(const std::vector<std::string>& payloads) {
    UpstreamQueue queue;
    for (const std::string& payload : payloads) {
      queue.Push(0, {reinterpret_cast<const uint8_t*>(payload.data()), payload.size()});
    }
    channel_->Send(queue);
  }
  // The next `count` requests the upstream reads (3 s at most).
  std::vector<Request> Read(size_t count) {
    std::vector<Request> requests;
    const absl::Time give_up = absl::Now() + absl::Seconds(3);
    while (requests.size() < count && absl::Now() < give_up) {
      pollfd ready = {upstream_fd_, POLLIN, 0};
      if (poll(&ready, 1, 50) <= 0) continue;
      char buffer[512];
      sockaddr_in from{};
      socklen_t length = sizeof(from);
      const ssize_t got = recvfrom(upstream_fd_, buffer, sizeof(buffer), 0,
                                   reinterpret_cast<sockaddr*>(&from), &length);
      if (got > 0) requests.push_back({std::string(buffer, got), ntohs(from.sin_port)});
    }
    return requests;
  }
  void Reply(uint16_t port, const std::string& payload) {
    const SocketAddress to = Loopback(port);
    ASSERT_EQ(sendto(upstream_fd_, payload.data(), payload.size(), 0, to.get(), to.length),
              static_cast<ssize_t>(payload.size()));
  }
  bool RunUntil(const std::function<bool()>& done, absl::Duration limit = absl::Seconds(3)) {
    const absl::Time give_up = absl::Now() + limit;
    while (!done() && absl::Now() < give_up) {
      driver_->RunOnce();
      absl::SleepFor(absl::Milliseconds(1));
    }
    return done();
  }
  // Runs the loop for `time`: for what must not happen.
  void Run(absl::Duration time) {
    RunUntil([] { return false; }, time);
  }

  TimerQueue timers_;
  std::unique_ptr<LibeventDriver> driver_;
  int upstream_fd_ = -1;
  int upstream_port_ = 0;
  WorkerStats stats_;
  std::unique_ptr<UpstreamChannel> channel_;
  std::vector<std::string> delivered_;
};

TEST_F(ChannelTest, EachRequestLeavesFromItsOwnPortAndTheReplyClosesIt) {
  Make({.request_key = &FirstByteKey, .requests_per_port = 1});
  Send({"a1", "b2", "c3"});
  const std::vector<Request> requests = Read(3);
  ASSERT_EQ(requests.size(), 3u);
  std::set<uint16_t> ports;
  for (const Request& request : requests) ports.insert(request.port);
  EXPECT_EQ(ports.size(), 3u) << "requests shared a source port";
  EXPECT_EQ(channel_->open_ports(0), 3u);
  for (const Request& request : requests) Reply(request.port, request.payload + " answer");
  ASSERT_TRUE(RunUntil([&] { return delivered_.size() == 3; }));
  EXPECT_TRUE(RunUntil([&] { return channel_->open_ports(0) == 0; })) << "answered ports stay open";
  EXPECT_EQ(stats_.upstream_unexpected.load(), 0u);
}

// A reload's upstreams (SetUpstreams): the same address keeps its ports, so a reply still due
// is delivered; a vacant index has its ports closed and refuses requests (counted); a new index
// opens on its first request.
TEST_F(ChannelTest, SetUpstreamsKeepsTheSameAddressAndClosesAVacatedOne) {
  Make({.request_key = &FirstByteKey, .requests_per_port = 1});
  Send({"a1"});
  std::vector<Request> requests = Read(1);
  ASSERT_EQ(requests.size(), 1u);
  channel_->SetUpstreams({Loopback(upstream_port_)});
  EXPECT_EQ(channel_->open_ports(0), 1u);
  Reply(requests[0].port, "a1 answer");
  ASSERT_TRUE(RunUntil([&] { return delivered_.size() == 1; }));

  Send({"b2"});
  requests = Read(1);
  ASSERT_EQ(requests.size(), 1u);
  channel_->SetUpstreams({SocketAddress(), Loopback(upstream_port_)});
  EXPECT_EQ(channel_->size(), 2u);
  EXPECT_EQ(channel_->open_ports(0), 0u);
  Reply(requests[0].port, "b2 answer");  // to a closed port: nobody takes it
  Run(absl::Milliseconds(100));
  EXPECT_EQ(delivered_.size(), 1u);
  const uint64_t errors = stats_.upstream_send_errors.load();
  Send({"c3"});
  EXPECT_EQ(stats_.upstream_send_errors.load(), errors + 1);
  EXPECT_EQ(channel_->open_ports(0), 0u);
  UpstreamQueue queue;
  const uint8_t payload[] = {'d', '4'};
  queue.Push(1, payload);
  channel_->Send(queue);
  requests = Read(1);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].payload, "d4");
  EXPECT_EQ(channel_->open_ports(1), 1u);
}

TEST_F(ChannelTest, AReplyOnAnotherRequestsPortOrASecondReplyIsDropped) {
  Make({.request_key = &FirstByteKey, .requests_per_port = 1});
  Send({"a1", "b2"});
  const std::vector<Request> requests = Read(2);
  ASSERT_EQ(requests.size(), 2u);
  // "a"'s reply sent to the port "b" left from: the right key, the wrong port.
  Reply(requests[1].port, "a forged");
  Run(absl::Milliseconds(100));
  EXPECT_TRUE(delivered_.empty());
  EXPECT_EQ(stats_.upstream_unexpected.load(), 1u);
  Reply(requests[0].port, "a real");
  ASSERT_TRUE(RunUntil([&] { return delivered_.size() == 1; }));
  EXPECT_EQ(delivered_[0], "a real");
  // The port has closed with its reply: a second "a" reply finds nothing to take it.
  Reply(requests[0].port, "a again");
  Run(absl::Milliseconds(100));
  EXPECT_EQ(delivered_.size(), 1u);
}

TEST_F(ChannelTest, PortsCarryingSeveralRequestsRetireAfterThemAndLingerWithoutReplies) {
  Make({.request_key = &FirstByteKey, .requests_per_port = 2, .linger = absl::Milliseconds(200)});
  Send({"a", "b", "c", "d"});
  const std::vector<Request> requests = Read(4);
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].port, requests[1].port);
  EXPECT_EQ(requests[2].port, requests[3].port);
  EXPECT_NE(requests[0].port, requests[2].port);
  // Unanswered: both close after the linger time.
  EXPECT_TRUE(RunUntil([&] { return channel_->open_ports(0) == 0; }));
  EXPECT_EQ(stats_.upstream_ports_expired.load(), 2u);
}

TEST_F(ChannelTest, AtThePortCapRequestsShareTheOpenPorts) {
  Make({.request_key = &FirstByteKey, .requests_per_port = 1, .max_ports = 2});
  Send({"a", "b", "c", "d", "e"});
  const std::vector<Request> requests = Read(5);
  ASSERT_EQ(requests.size(), 5u);
  std::set<uint16_t> ports;
  for (const Request& request : requests) ports.insert(request.port);
  EXPECT_EQ(ports.size(), 2u);
  EXPECT_EQ(channel_->open_ports(0), 2u);
  EXPECT_EQ(stats_.upstream_ports_shared.load(), 3u);
  // Every reply on its own request's port is taken, shared or not.
  for (const Request& request : requests) Reply(request.port, request.payload);
  EXPECT_TRUE(RunUntil([&] { return delivered_.size() == 5; }));
}

}  // namespace
}  // namespace onepass
