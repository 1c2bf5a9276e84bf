// --io=uring (server/drivers/uring/uring_driver.h): an unknown --io refused with a message that
// says what to do, and (in a build with ONEPASS_IO_URING) its own counters: the single pass, a
// parked request that came in two pieces, a silent client cut at the read deadline, and the DNS
// frontend's upstreams (--dns-backend) on the ring. The protocols' own end-to-end tests run
// against it too (tests/integration/CMakeLists.txt, label uring).
#include <signal.h>

#include <cstdint>
#include <future>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass {
namespace {

using testing::CommandResult;
using testing::OnepassdPath;
using testing::RunCommand;
using testing::ServerProcess;
using testing::StatValue;
using testing::TcpClient;

// Fails to start, non-zero, with `expected` on stderr.
void ExpectRefused(std::vector<std::string> argv, const std::string& expected) {
  argv.insert(argv.begin(), OnepassdPath());
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(20));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->exit_code, 0);
  EXPECT_FALSE(result->timed_out);
  EXPECT_TRUE(absl::StrContains(result->err, expected)) << result->err;
}

#ifdef ONEPASS_IO_URING_BUILT

TEST(UringTest, RefusesAnUnknownLoopAndSaysWhatToDo) {
  ExpectRefused({"--handler", "dns", "--listen", "127.0.0.1:0", "--io=ring"},
                "choose epoll or uring");
}

TEST(UringTest, SinglePassParkingAndReadDeadline) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"--handler", "whois", "--listen", "127.0.0.1:0", "--workers", "1", "--io=uring",
       "--read-timeout-ms", "300", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  constexpr int kSinglePass = 50;
  for (int i = 0; i < kSinglePass; ++i) {
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE(client->Send("example.com\r\n").ok());
    absl::StatusOr<std::string> answer = client->ReadUntilClose();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_FALSE(answer->empty());
  }
  {
    // The request in two pieces: the first recv finds half of it, the connection parks.
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE(client->Send("examp").ok());
    // The rest only once the first half is parked (the gauge says so), within its deadline.
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          return testing::ScrapeValue((*server)->metrics_address(), "onepass_parked_connections") ==
                 1;
        },
        absl::Seconds(5)));
    ASSERT_TRUE(client->Send("le.com\r\n").ok());
    absl::StatusOr<std::string> answer = client->ReadUntilClose();
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_FALSE(answer->empty());
  }
  {
    // A silent client: handed over by TCP_DEFER_ACCEPT after ~1 s, closed at the deadline.
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
    ASSERT_TRUE(client.ok()) << client.status();
    absl::StatusOr<std::string> answer = client->ReadUntilClose(absl::Seconds(10));
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_TRUE(answer->empty());
  }
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string stats = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(stats, "accepted"), kSinglePass + 2) << stats;
  EXPECT_EQ(StatValue(stats, "single_pass"), kSinglePass) << stats;
  EXPECT_EQ(StatValue(stats, "parked"), 2) << stats;
  EXPECT_EQ(StatValue(stats, "read_timeouts"), 1) << stats;
  EXPECT_EQ(StatValue(stats, "responses"), kSinglePass + 1) << stats;
}

// The DNS frontend on the ring: pipelined queries on one connection, each answered from the
// backend after the connection parked waiting on upstream; then a query still at the backend
// when the drain begins is answered before the server exits. The worker's ring was set up (a
// worker whose ring fails stops serving and says so).
TEST(UringTest, RunsTheDnsFrontendAndDrainsWithAQueryAtTheBackend) {
  dns::testing::FakeUdpBackend backend(absl::Milliseconds(300));  // answers late
  backend.answering = true;
  ASSERT_GT(backend.port(), 0);
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1", "--io=uring",
       "--dns-backend", dns::testing::LoopbackBackend(backend.port()), "--dns-cache-entries", "0",
       // Loopback clients only: no start-up probe, so the backend counts only our queries.
       "--allow-from", "127.0.0.0/8"});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  constexpr int kPipelined = 3;
  std::vector<std::vector<uint8_t>> queries;
  std::set<int> ids;
  for (int i = 0; i < kPipelined; ++i) {
    const uint16_t id = static_cast<uint16_t>(0x100 + i);
    queries.push_back(
        dns::testing::MakeQuery(absl::StrCat("q", i, ".example.com"), "A", {.id = id}));
    ids.insert(id);
  }
  absl::StatusOr<std::vector<std::vector<uint8_t>>> replies =
      dns::testing::ExchangeTcp(port, queries, absl::Seconds(10));
  ASSERT_TRUE(replies.ok()) << replies.status();
  std::set<int> answered;
  for (const std::vector<uint8_t>& reply : *replies) {
    absl::StatusOr<dns::testing::DecodedResponse> decoded = dns::testing::DecodeResponse(reply);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->rcode, 0) << "the backend's answer, not SERVFAIL";
    answered.insert(decoded->id);
  }
  EXPECT_EQ(answered, ids);

  const std::vector<uint8_t> last = dns::testing::MakeQuery("drain.example.com", "A", {.id = 7});
  auto pending = std::async(std::launch::async, [&] {
    return dns::testing::ExchangeTcp(port, {last}, absl::Seconds(10));
  });
  ASSERT_TRUE(
      testing::WaitFor([&] { return backend.received >= kPipelined + 1; }, absl::Seconds(3)));
  EXPECT_EQ((*server)->Stop(), 0);  // SIGTERM: drains while the answer is 300 ms away
  absl::StatusOr<std::vector<std::vector<uint8_t>>> drained = pending.get();
  ASSERT_TRUE(drained.ok()) << drained.status();
  ASSERT_EQ(drained->size(), 1u);
  absl::StatusOr<dns::testing::DecodedResponse> decoded =
      dns::testing::DecodeResponse((*drained)[0]);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->id, 7);
  EXPECT_EQ(decoded->rcode, 0);

  const std::string stats = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(stats, "accepted"), 2) << stats;
  EXPECT_EQ(StatValue(stats, "parked"), 2) << stats;
  EXPECT_EQ(StatValue(stats, "upstream_sent"), kPipelined + 1) << stats;
  EXPECT_EQ(StatValue(stats, "upstream_received"), kPipelined + 1) << stats;
  EXPECT_EQ(StatValue(stats, "upstream_orphans"), 0) << stats;
  EXPECT_EQ(StatValue(stats, "responses"), kPipelined + 1) << stats;
  EXPECT_EQ(StatValue(stats, "closed_drain"), 0) << stats;
  const std::string log = (*server)->ReadStderr();
  EXPECT_FALSE(absl::StrContains(log, "stops serving")) << log;
}

#else

TEST(UringTest, ABuildWithoutItSaysHowToGetIt) {
  ExpectRefused({"--handler", "dns", "--listen", "127.0.0.1:0", "--io=uring"},
                "-DONEPASS_IO_URING=ON");
}

#endif

}  // namespace
}  // namespace onepass
