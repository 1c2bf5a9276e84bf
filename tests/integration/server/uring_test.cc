// --io=uring (server/uring_loop.h): what it refuses to run, with a message that says what to
// do, and (in a build with ONEPASS_IO_URING) its own counters: the single pass, a parked
// request that came in two pieces, a silent client cut at the read deadline. The protocols'
// own end-to-end tests run against it too (tests/integration/CMakeLists.txt, label uring).
#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"

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

TEST(UringTest, RefusesWhatItDoesNotRunAndSaysWhatToDo) {
  ExpectRefused(
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--io=uring", "--dns-backend", "127.0.0.1:9"},
      "use --io=epoll with --dns-backend");
  ExpectRefused({"--handler", "dns", "--listen", "127.0.0.1:0", "--io=uring",
                 "--proxy-protocol-from", "10.0.0.0/8"},
                "use --io=epoll behind a PROXY v2 balancer");
  ExpectRefused({"--handler", "dns", "--listen", "127.0.0.1:0", "--io=ring"},
                "choose epoll or uring");
}

TEST(UringTest, SinglePassParkingAndReadDeadline) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "whois", "--listen", "127.0.0.1:0", "--workers", "1",
                            "--io=uring", "--read-timeout-ms", "300"});
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
    absl::SleepFor(absl::Milliseconds(100));  // within --read-timeout-ms
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

#else

TEST(UringTest, ABuildWithoutItSaysHowToGetIt) {
  ExpectRefused({"--handler", "dns", "--listen", "127.0.0.1:0", "--io=uring"},
                "-DONEPASS_IO_URING=ON");
}

#endif

}  // namespace
}  // namespace onepass
