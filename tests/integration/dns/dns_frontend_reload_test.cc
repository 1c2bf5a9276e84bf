// A SIGHUP reload of the DNS frontend while a query waits on its backend: the new handler takes
// over the in-flight table (ForwardingHandler::TakeOver), so the backend's late answer still
// reaches the client, at once, instead of the client waiting out the server's 60 s backstop. The
// backend is a fake inside the test (FakeUdpBackend) that answers each datagram 600 ms late.
#include <signal.h>

#include <future>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::MakeQuery;

constexpr absl::Duration kBackendDelay = absl::Milliseconds(600);

TEST(FrontendReload, QueryWaitingOnTheBackendIsAnsweredAcrossAReload) {
  testing::FakeUdpBackend backend(kBackendDelay);
  backend.answering = true;
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
  ASSERT_TRUE(onepass::testing::WaitFor([&] { return backend.received >= 1; }, absl::Seconds(3)));
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
