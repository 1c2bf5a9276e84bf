// The real programs: onepassd for --help and startup errors, onepass-line-server (onepassd's
// ServerMain with the test line protocol) for the process lifecycle: the stdout contract,
// repeated --listen, signals, drain and the exit "stats" line. Real clients (nc) where it
// matters.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "server/server_config.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

using testing::CommandResult;
using testing::OnepassdPath;
using testing::RunCommand;
using testing::ServerProcess;
using testing::StatValue;
using testing::TcpClient;

const std::string kLineServer = LINE_SERVER_PATH;

// The startup error contract: exit non-zero, exactly one line on stderr, nothing on stdout.
void ExpectOneLineError(const std::vector<std::string>& argv, absl::string_view expected) {
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(20));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->exit_code, 0) << absl::StrJoin(argv, " ");
  EXPECT_FALSE(result->timed_out);
  EXPECT_EQ(std::count(result->err.begin(), result->err.end(), '\n'), 1) << result->err;
  EXPECT_TRUE(absl::StrContains(result->err, expected)) << result->err;
  EXPECT_EQ(result->out, "");
}

TEST(OnepassdTest, HelpDescribesTheFlagsAndExitsZero) {
  absl::StatusOr<CommandResult> result = RunCommand({OnepassdPath(), "--help"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0);
  for (const char* flag : {"--listen", "--handler", "--workers", "--cpus", "--steering",
                           "--backlog", "--accept-burst", "--read-timeout-ms", "--write-timeout-ms",
                           "--keepalive-ms", "--drain-timeout-ms", "--max-connections"}) {
    EXPECT_TRUE(absl::StrContains(result->out, absl::StrCat(flag, " "))) << flag;
  }
}

TEST(OnepassdTest, VersionNamesTheBuild) {
  absl::StatusOr<CommandResult> result = RunCommand({OnepassdPath(), "--version"});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_TRUE(absl::StartsWith(result->out, "onepassd ")) << result->out;
  EXPECT_EQ(std::count(result->out.begin(), result->out.end(), '\n'), 1) << result->out;
}

TEST(OnepassdTest, StartupErrorsAreOneLineAndNonZero) {
  ExpectOneLineError({OnepassdPath(), "--handler", "nosuch", "--listen", "127.0.0.1:0"},
                     "dns|ocsp|whois|rdap");
  ExpectOneLineError({OnepassdPath(), "--listen", "127.0.0.1:0", "--cpus", "1000"},
                     "affinity mask");
  ExpectOneLineError({OnepassdPath(), "--listen", "127.0.0.1:0", "--cpus", "3-1"}, "--cpus");
  ExpectOneLineError({OnepassdPath(), "--listen", "localhost:53"}, "ADDR:PORT");
  ExpectOneLineError({OnepassdPath()}, "--listen");
  ExpectOneLineError({OnepassdPath(), "--listen", "127.0.0.1:0", "--steering", "rss"},
                     "--steering");
  ExpectOneLineError({OnepassdPath(), "--listen", "127.0.0.1:0", "--read-timeout-ms", "0"},
                     "--read-timeout-ms");
}

TEST(OnepassdTest, PortInUseIsOneLineAndNonZero) {
  // A plain listener (no SO_REUSEPORT) holds a port.
  int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  socklen_t length = sizeof(address);
  getsockname(holder, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string listen = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  ExpectOneLineError({kLineServer, "--handler", "line", "--listen", listen}, "in use");
  close(holder);
}

TEST(OnepassdTest, SecondInstanceOnTheSamePortIsRefused) {
  // SO_REUSEPORT would let a second server of the same user join the port's group and take a
  // share of the connections unnoticed; it must fail at startup instead.
  auto first = ServerProcess::Start({"--handler", "line", "--listen", "127.0.0.1:0"}, kLineServer);
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectOneLineError({kLineServer, "--handler", "line", "--listen", (*first)->addresses()[0]},
                     "in use");
  EXPECT_EQ((*first)->Stop(), 0);
  // Once it is gone the port is free again, TIME-WAIT sockets or not.
  auto again = ServerProcess::Start({"--handler", "line", "--listen", (*first)->addresses()[0]},
                                    kLineServer);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->Stop(), 0);
}

// Sockets in the descriptor table of thread `tid` of `pid` (/proc/PID/task/TID/fd).
int SocketsInTable(pid_t pid, const std::string& tid) {
  absl::StatusOr<CommandResult> listing = RunCommand(
      {"sh", "-c", absl::StrCat("ls -l /proc/", pid, "/task/", tid, "/fd | grep -c 'socket:'")},
      absl::Seconds(10));
  if (!listing.ok()) return -1;
  int count = -1;
  return absl::SimpleAtoi(absl::StripAsciiWhitespace(listing->out), &count) ? count : -1;
}

// --private-fd-tables (the default): each worker accepts in a descriptor table of its own,
// which holds its listener; the main thread's table no longer holds any (it closed its copies),
// so a worker's close at drain really closes its listener. With --private-fd-tables=false all
// threads share the one table that holds both listeners. A ThreadSanitizer build shares by
// default (kPrivateFdTablesByDefault: TSan's descriptor tracking assumes one table).

TEST(OnepassdTest, PrivateFdTablesMoveEachListenerToItsWorkersTable) {
  for (const bool private_tables : {false, true}) {
    std::vector<std::string> args = {"--handler",   "line",      "--listen",
                                     "127.0.0.1:0", "--workers", "2"};
    if (!private_tables) args.push_back("--private-fd-tables=false");
    absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(args, kLineServer);
    ASSERT_TRUE(server.ok()) << server.status();
    const pid_t pid = (*server)->pid();
    // The label shared_fds run adds --private-fd-tables=false to every start
    // (ONEPASS_TEST_ONEPASSD_ARGS, appended last, so it wins).
    const char* extra = std::getenv("ONEPASS_TEST_ONEPASSD_ARGS");
    const bool forced_shared =
        extra != nullptr && absl::StrContains(extra, "--private-fd-tables=false");
    EXPECT_EQ(SocketsInTable(pid, absl::StrCat(pid)),
              private_tables && kPrivateFdTablesByDefault && !forced_shared ? 0 : 2)
        << private_tables;
    // Still served, by both workers' tables.
    for (int i = 0; i < 4; ++i) {
      absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
      ASSERT_TRUE(client.ok());
      ASSERT_TRUE(client->Send("ping\n").ok());
      absl::StatusOr<std::string> reply = client->ReadUntilClose();
      ASSERT_TRUE(reply.ok()) << reply.status();
      EXPECT_TRUE(absl::StrContains(*reply, "ping")) << *reply;
    }
    EXPECT_EQ((*server)->Stop(), 0);
  }
}

TEST(OnepassdTest, ServesStopsOnSigtermAndPrintsStats) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "line", "--listen", "127.0.0.1:0", "--listen=[::1]:0",
                            "--read-timeout-ms", "1000", "--accept_burst", "8"},
                           kLineServer);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_EQ((*server)->addresses().size(), 2u);
  EXPECT_TRUE(absl::StartsWith((*server)->addresses()[1], "[::1]:"));
  const std::string port = absl::StrCat((*server)->port());
  // A real client first (netcat-openbsd, from scripts/install-deps.sh).
  ASSERT_TRUE(testing::ProgramExists("nc")) << "nc missing: run scripts/install-deps.sh";
  absl::StatusOr<CommandResult> nc =
      RunCommand({"nc", "-N", "127.0.0.1", port}, absl::Seconds(10), "hello nc\n");
  ASSERT_TRUE(nc.ok()) << nc.status();
  EXPECT_TRUE(absl::StrContains(nc->out, " hello nc\n")) << nc->out << nc->err;
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("second\n").ok());
  ASSERT_TRUE(client->ReadUntilClose().ok());

  // SIGUSR1: the counters on stderr, and the server keeps running.
  kill((*server)->pid(), SIGUSR1);
  std::string log;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        log += (*server)->ReadStderr();
        return absl::StrContains(log, "stats accepted=");
      },
      absl::Seconds(2)))
      << log;

  EXPECT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "accepted"), 2) << out;
  EXPECT_EQ(StatValue(out, "served"), 2) << out;
  EXPECT_EQ(StatValue(out, "errors"), 0) << out;
}

TEST(OnepassdTest, SigtermFinishesARequestInFlight) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      // A read timeout well past the polls below: on a loaded machine (TSan) they can take
      // seconds, and the request must still be in flight when SIGTERM comes.
      {"--handler", "line", "--listen", "127.0.0.1:0", "--drain-timeout-ms", "10000",
       "--read-timeout-ms", "20000"},
      kLineServer);
  ASSERT_TRUE(server.ok()) << server.status();
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("in fl").ok());
  // Accepted and parked (TCP_DEFER_ACCEPT: the bytes are there): SIGUSR1 logs the counters.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        kill((*server)->pid(), SIGUSR1);
        return absl::StrContains((*server)->ReadStderr(), " parked=1");
      },
      absl::Seconds(10), absl::Milliseconds(50)))
      << (*server)->ReadStderr();
  kill((*server)->pid(), SIGTERM);
  // Draining, with the listeners closed: the rest of the request arrives during the drain.
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        return absl::StrContains((*server)->ReadStderr(), "SIGTERM: draining") &&
               !testing::IsListening((*server)->port());
      },
      absl::Seconds(10)))
      << (*server)->ReadStderr();
  ASSERT_TRUE(client->Send("ight\n").ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose();
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_TRUE(absl::StrContains(*reply, " in flight\n")) << *reply;
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "served"), 1) << out;
  EXPECT_EQ(StatValue(out, "closed_drain"), 0) << out;
}

// Defect 3: a descriptor limit far below --max-connections (a shell's ulimit -n) must not run
// out under dribbling clients (accept paused on EMFILE and every client waited): the soft limit
// goes up to the hard one and the connection limit comes down to what fits, said in one line;
// the clients beyond it are refused one by one (rejected_pool_full), and accepting never pauses.
TEST(OnepassdTest, TooFewDescriptorsLowerTheConnectionLimitInsteadOfPausing) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      {"-c", absl::StrCat("ulimit -Sn 40 && ulimit -Hn 100 && exec ", kLineServer,
                          " --handler line --listen 127.0.0.1:0 --cpus 0 --read-timeout-ms 5000 "
                          "--max-connections-per-client 1000")},
      "/bin/sh");
  ASSERT_TRUE(server.ok()) << server.status();
  std::string log;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        log += (*server)->ReadStderr();
        return absl::StrContains(log, "lowered to");
      },
      absl::Seconds(5)))
      << log;
  EXPECT_TRUE(absl::StrContains(log, "raised the descriptor limit from 40 to its hard limit 100"))
      << log;
  std::vector<TcpClient> clients;
  for (int i = 0; i < 60; ++i) {
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE(client->Send("partial").ok());  // parked: holds a descriptor
    clients.push_back(*std::move(client));
  }
  // A good client is answered at once, even with every parking slot taken.
  absl::StatusOr<TcpClient> good = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(good.ok());
  ASSERT_TRUE(good->Send("good\n").ok());
  absl::StatusOr<std::string> reply = good->ReadUntilClose(absl::Seconds(2));
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_TRUE(absl::StrContains(*reply, " good\n")) << *reply;
  clients.clear();
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "accept_pauses"), 0) << out;
  // Beyond the lowered limit a newcomer takes the place of the one waiting longest (or is
  // refused when nothing waits to read).
  EXPECT_GT(StatValue(out, "rejected_pool_full") + StatValue(out, "evicted_waiting"), 0) << out;
}

TEST(OnepassdTest, DnsOverTcpWithKdig) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  if (!testing::ProgramExists("kdig")) GTEST_SKIP() << "kdig is not installed";
  absl::StatusOr<CommandResult> kdig =
      RunCommand({"kdig", "+tcp", "+time=3", "+retry=0", "@127.0.0.1", "-p",
                  absl::StrCat((*server)->port()), "www.example.com", "A"});
  ASSERT_TRUE(kdig.ok()) << kdig.status();
  EXPECT_EQ(kdig->exit_code, 0) << kdig->out << kdig->err;
  EXPECT_TRUE(absl::StrContains(kdig->out, "status: NOERROR")) << kdig->out;
  EXPECT_TRUE(absl::StrContains(kdig->out, "www.example.com.")) << kdig->out;
  EXPECT_EQ((*server)->Stop(), 0);
  EXPECT_EQ(StatValue((*server)->ReadStdout(), "served"), 1);
}

}  // namespace
}  // namespace onepass
