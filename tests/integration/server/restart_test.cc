// Restart without losing a connection (server/restart/listener_handover.h): five new onepassd
// processes take over the listening sockets of the running one during a load run, with a data
// reload in between; the load tester must count no refused, reset or failed connection.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <iostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ServerProcess;
using testing::StatValue;

long long Field(const std::string& text, const std::string& pattern) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(pattern))) return -1;
  return std::stoll(match[1]);
}

TEST(RestartTest, FiveRestartsAndAReloadUnderLoadLoseNoConnection) {
  std::string dir = ::testing::TempDir() + "onepass-restart-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  const std::vector<std::string> args = {
      "--handler",
      "dns",
      "--listen",
      "127.0.0.1:0",
      "--workers",
      "2",
      "--zone",
      std::string(ONEPASS_SOURCE_DIR) + "/tests/data/example.com.zone",
      "--handover-socket",
      dir + "/handover.sock",
      "--metrics-listen",
      "127.0.0.1:0"};
  absl::StatusOr<std::unique_ptr<ServerProcess>> first = ServerProcess::Start(args);
  ASSERT_TRUE(first.ok()) << first.status();
  std::unique_ptr<ServerProcess> current = *std::move(first);
  const std::string target = current->addresses()[0];

  // Closed loop, 8 connections in flight, for 8 s: the restarts happen inside it.
  absl::StatusOr<CommandResult> load = absl::UnknownError("not run");
  std::thread load_thread([&] {
    load = RunCommand({ONEPASS_LOAD_PATH, "--target", target, "--proto", "dns", "--qname",
                       "www.example.com.", "--qtype", "A", "--duration", "8", "--concurrency", "8",
                       "--threads", "2", "--timeout-ms", "5000"},
                      absl::Seconds(60));
  });
  // Each server hands over only once it has served some of the load itself (its counters say
  // so), so every restart happens under load.
  const auto serving = [&](const ServerProcess& server) {
    return testing::WaitFor(
        [&] {
          return testing::ScrapeValue(server.metrics_address(), "onepass_served_total") >= 200;
        },
        absl::Seconds(10));
  };
  ASSERT_TRUE(serving(*current)) << "the load did not reach the first server";
  int reloads_seen = 0;
  for (int restart = 1; restart <= 5; ++restart) {
    absl::StatusOr<std::unique_ptr<ServerProcess>> next = ServerProcess::Start(args);
    ASSERT_TRUE(next.ok()) << "restart " << restart << ": " << next.status();
    EXPECT_EQ((*next)->addresses()[0], target);
    // The old one drains and exits by itself, printing its stats.
    std::string old_out;
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          old_out += current->ReadStdout();
          return absl::StrContains(old_out, "stats ");
        },
        absl::Seconds(10)))
        << "restart " << restart << ": the old server did not exit: " << current->ReadStderr();
    reloads_seen += std::max(0, StatValue(old_out, "reloads"));
    EXPECT_EQ(current->Stop(), 0);
    current = *std::move(next);
    if (restart == 2) {
      // A data reload between two restarts.
      ASSERT_EQ(kill(current->pid(), SIGHUP), 0);
      std::string log;
      EXPECT_TRUE(testing::WaitFor(
          [&] {
            log += current->ReadStderr();
            return absl::StrContains(log, "reloaded dns data");
          },
          absl::Seconds(10)))
          << log;
    }
    EXPECT_TRUE(serving(*current)) << "restart " << restart << ": the new server serves nothing";
  }
  load_thread.join();
  EXPECT_EQ(current->Stop(), 0);
  const std::string last_out = current->ReadStdout();
  (void)RunCommand({"rm", "-rf", dir}, absl::Seconds(10));

  ASSERT_TRUE(load.ok()) << load.status();
  std::cout << load->out;  // the figures, for the log
  EXPECT_EQ(load->exit_code, 0) << load->out << load->err;
  const long long started = Field(load->out, "([0-9]+) started");
  EXPECT_GT(started, 1000) << load->out;
  EXPECT_EQ(Field(load->out, "started, ([0-9]+) ok"), started) << load->out;
  EXPECT_EQ(Field(load->out, "ok, ([0-9]+) errors"), 0) << load->out;
  EXPECT_EQ(reloads_seen, 1);
  EXPECT_EQ(StatValue(last_out, "errors"), 0) << last_out;
}

// The upgrade under systemd: SIGUSR2 makes onepassd start its successor (the binary at its path,
// same flags), which takes the sockets over; the old one drains and exits, the port never stops
// answering.
TEST(RestartTest, Sigusr2StartsASuccessorThatTakesOver) {
  std::string dir = ::testing::TempDir() + "onepass-upgrade-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  absl::StatusOr<std::unique_ptr<ServerProcess>> old =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1",
                            "--handover-socket", dir + "/handover.sock"});
  ASSERT_TRUE(old.ok()) << old.status();
  const std::string target = (*old)->addresses()[0];
  ASSERT_EQ(kill((*old)->pid(), SIGUSR2), 0);
  std::string log;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        log += (*old)->ReadStderr();  // the successor inherits the same stderr
        return absl::StrContains(log, "(this is pid ") && absl::StrContains(log, "draining");
      },
      absl::Seconds(20)))
      << log;
  const long long successor = Field(log, R"(\(this is pid ([0-9]+)\))");
  ASSERT_GT(successor, 0) << log;
  EXPECT_EQ((*old)->Stop(), 0);
  // The successor answers on the same port.
  absl::StatusOr<CommandResult> load =
      RunCommand({ONEPASS_LOAD_PATH, "--target", target, "--proto", "dns", "--qname",
                  "www.example.com.", "--count", "200", "--concurrency", "4"},
                 absl::Seconds(30));
  ASSERT_EQ(kill(static_cast<pid_t>(successor), SIGTERM), 0);
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_NE(load->out.find("200 started, 200 ok, 0 errors"), std::string::npos) << load->out;
  // It drains and exits on SIGTERM (it is not our child: wait for its pid to go).
  EXPECT_TRUE(testing::WaitFor([&] { return kill(static_cast<pid_t>(successor), 0) != 0; },
                               absl::Seconds(10)));
  (void)RunCommand({"rm", "-rf", dir}, absl::Seconds(10));
}

}  // namespace
}  // namespace onepass
