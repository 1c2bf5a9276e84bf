// A SIGHUP reload of the DNS frontend while a query waits on its backend: the new handler takes
// over the in-flight table (Handler::TakeOver), so the backend's late answer still reaches the
// client, at once, instead of the client waiting out the server's 60 s backstop. The backend is
// a fake inside the test that answers each datagram 600 ms late (the query with QR set).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::MakeQuery;

constexpr absl::Duration kBackendDelay = absl::Milliseconds(600);

// A UDP backend on a free loopback port that echoes each query as its answer (QR set) after
// kBackendDelay; stops (at most 200 ms later) when destroyed.
class SlowBackend {
 public:
  SlowBackend() {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return;
    }
    port_ = ntohs(address.sin_port);
    timeval poll_period = {0, 200 * 1000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &poll_period, sizeof(poll_period));
    thread_ = std::thread([this] { Serve(); });
  }
  ~SlowBackend() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  int received() const { return received_; }

 private:
  void Serve() {
    uint8_t datagram[4096];
    while (!stop_) {
      sockaddr_storage peer{};
      socklen_t peer_length = sizeof(peer);
      const ssize_t n = recvfrom(fd_, datagram, sizeof(datagram), 0,
                                 reinterpret_cast<sockaddr*>(&peer), &peer_length);
      if (n < 12) continue;  // timeout (a chance to stop) or not a DNS header
      ++received_;
      absl::SleepFor(kBackendDelay);
      datagram[2] |= 0x80;  // QR
      sendto(fd_, datagram, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&peer),
             peer_length);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

TEST(FrontendReload, QueryWaitingOnTheBackendIsAnsweredAcrossAReload) {
  SlowBackend backend;
  ASSERT_GT(backend.port(), 0);
  auto frontend = testing::StartFrontend({testing::LoopbackBackend(backend.port())},
                                         {"--dns-cache-entries", "0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const int port = (*frontend)->port();
  const std::vector<uint8_t> query = MakeQuery("waiting.example.com", "A", {.id = 0x4242});
  const absl::Time start = absl::Now();
  auto pending = std::async(std::launch::async,
                            [&] { return testing::ExchangeTcp(port, {query}, absl::Seconds(10)); });
  // The query is at the backend, its answer 600 ms away: reload now.
  ASSERT_TRUE(onepass::testing::WaitFor([&] { return backend.received() >= 1; }, absl::Seconds(3)));
  ASSERT_EQ(kill((*frontend)->pid(), SIGHUP), 0);
  std::string log;
  ASSERT_TRUE(onepass::testing::WaitFor(
      [&] {
        log += (*frontend)->ReadStderr();
        return log.find("serving reload") != std::string::npos;
      },
      absl::Seconds(5)))
      << log;

  auto replies = pending.get();
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(replies.ok()) << replies.status() << "\n" << log;
  ASSERT_EQ(replies->size(), 1u);
  auto answer = testing::DecodeResponse((*replies)[0]);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->id, 0x4242);
  EXPECT_EQ(answer->rcode, 0) << "the backend's answer, not SERVFAIL";
  // The backend's delay plus slack; before the take-over the client waited for the backstop.
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_EQ((*frontend)->Stop(), 0);
}

}  // namespace
}  // namespace onepass::dns
