// End-to-end tests of onepass-load against in-test servers that answer right or wrong on
// purpose: every wrong answer and every failure must be counted, by kind, exactly.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/integration/loadtest/fake_server.h"
#include "tests/support/subprocess.h"

namespace onepass::load::testing {
namespace {

using onepass::testing::CommandResult;
using onepass::testing::RunCommand;

struct LoadRun {
  CommandResult command;
  std::string json;
};

LoadRun RunLoad(std::vector<std::string> args) {
  std::string json_path =
      absl::StrCat(::testing::TempDir(), "/load_", getpid(), "_",
                   ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".json");
  std::vector<std::string> argv = {ONEPASS_LOAD_PATH, "--json", json_path};
  argv.insert(argv.end(), args.begin(), args.end());
  // The same tests for each client core: ONEPASS_TEST_LOAD_ARGS=--engine=epoll (CMake).
  if (const char* extra = std::getenv("ONEPASS_TEST_LOAD_ARGS"); extra != nullptr) {
    for (absl::string_view arg : absl::StrSplit(extra, ' ', absl::SkipEmpty())) {
      argv.emplace_back(arg);
    }
  }
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(60));
  EXPECT_TRUE(result.ok()) << result.status();
  LoadRun run;
  if (result.ok()) run.command = *result;
  std::ifstream file(json_path);
  std::stringstream buffer;
  buffer << file.rdbuf();
  run.json = buffer.str();
  std::remove(json_path.c_str());
  return run;
}

// The integer after "\"key\": " at its first occurrence after `after` (-1 if absent).
long long JsonInt(const std::string& json, const std::string& key, const std::string& after = "") {
  size_t from = after.empty() ? 0 : json.find("\"" + after + "\"");
  if (from == std::string::npos) return -1;
  std::regex pattern("\"" + key + "\": (-?[0-9]+)");
  std::smatch match;
  std::string tail = json.substr(from);
  if (!std::regex_search(tail, match, pattern)) return -1;
  return std::stoll(match[1]);
}

TEST(LoadTesterTest, CorrectDnsServerGivesNoErrors) {
  FakeServer server(DnsRequestComplete, [](int, const std::string& request) {
    return FakeAction{FakeAction::kReply, DnsAnswer(request)};
  });
  LoadRun run = RunLoad({"--target", server.address(), "--proto", "dns", "--qname",
                         "www.example.com.", "--count", "40", "--concurrency", "4"});
  ASSERT_EQ(run.command.exit_code, 0) << run.command.out << run.command.err;
  EXPECT_EQ(JsonInt(run.json, "started"), 40) << run.json;
  EXPECT_EQ(JsonInt(run.json, "ok"), 40);
  EXPECT_EQ(JsonInt(run.json, "total", "errors"), 0);
  EXPECT_EQ(server.accepted(), 40);
  EXPECT_NE(run.command.out.find("40 ok"), std::string::npos) << run.command.out;
}

TEST(LoadTesterTest, EveryThirdWrongIdIsCountedExactly) {
  FakeServer server(DnsRequestComplete, [](int index, const std::string& request) {
    return FakeAction{FakeAction::kReply, DnsAnswer(request, /*wrong_id=*/index % 3 == 2)};
  });
  LoadRun run = RunLoad(
      {"--target", server.address(), "--count", "30", "--concurrency", "3", "--threads", "2"});
  EXPECT_EQ(run.command.exit_code, 3) << run.command.out << run.command.err;  // 67% < 99.9%
  EXPECT_EQ(JsonInt(run.json, "ok"), 20) << run.json;
  EXPECT_EQ(JsonInt(run.json, "wrong", "errors"), 10);
  EXPECT_EQ(JsonInt(run.json, "total", "errors"), 10);
  EXPECT_EQ(JsonInt(run.json, "wrong ID"), 10);
  EXPECT_NE(run.command.out.find("sample: wrong ID: ID 0x"), std::string::npos) << run.command.out;
}

TEST(LoadTesterTest, EachFailureKindIsCountedOnItsOwn) {
  // Connection i: 0 good, 1 closed without a reply, 2 reset, 3 never answered, 4 SERVFAIL.
  FakeServer server(DnsRequestComplete, [](int index, const std::string& request) {
    switch (index % 5) {
      case 1:
        return FakeAction{FakeAction::kCloseSilently, ""};
      case 2:
        return FakeAction{FakeAction::kReset, ""};
      case 3:
        return FakeAction{FakeAction::kHang, ""};
      case 4: {
        std::string answer = DnsAnswer(request);
        answer[5] = 2;  // SERVFAIL
        return FakeAction{FakeAction::kReply, answer};
      }
      default:
        return FakeAction{FakeAction::kReply, DnsAnswer(request)};
    }
  });
  // One connection at a time, so accept order is start order.
  LoadRun run = RunLoad({"--target", server.address(), "--count", "10", "--concurrency", "1",
                         "--timeout-ms", "1000"});
  EXPECT_EQ(JsonInt(run.json, "ok"), 2) << run.json;
  EXPECT_EQ(JsonInt(run.json, "short", "errors"), 2);
  EXPECT_EQ(JsonInt(run.json, "reset", "errors"), 2);
  EXPECT_EQ(JsonInt(run.json, "timeout", "errors"), 2);
  EXPECT_EQ(JsonInt(run.json, "wrong", "errors"), 2);
  EXPECT_EQ(JsonInt(run.json, "unexpected rcode"), 2);
  EXPECT_NE(run.command.out.find("rcode SERVFAIL, expected NOERROR"), std::string::npos)
      << run.command.out;
}

TEST(LoadTesterTest, RefusedConnectionsAreCountedAndTheRunEnds) {
  // A port with nothing listening: bind one, read its number, close it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  LoadRun run = RunLoad({"--target", absl::StrCat("127.0.0.1:", ntohs(address.sin_port)), "--count",
                         "25", "--concurrency", "5"});
  EXPECT_EQ(run.command.exit_code, 3);
  EXPECT_EQ(JsonInt(run.json, "refused", "errors"), 25) << run.json;
  EXPECT_EQ(JsonInt(run.json, "ok"), 0);
}

TEST(LoadTesterTest, OpenLoopPacesAndMeasuresFromTheIntendedStart) {
  FakeServer server(DnsRequestComplete, [](int, const std::string& request) {
    return FakeAction{FakeAction::kReply, DnsAnswer(request)};
  });
  // 200 starts at 200/s: about a second, however late a busy machine wakes the client.
  LoadRun run = RunLoad({"--target", server.address(), "--rate", "200", "--count", "200"});
  ASSERT_EQ(run.command.exit_code, 0) << run.command.out << run.command.err;
  EXPECT_EQ(JsonInt(run.json, "started"), 200) << run.json;
  EXPECT_EQ(JsonInt(run.json, "ok"), 200);
  EXPECT_EQ(JsonInt(run.json, "unstarted"), 0);
  EXPECT_EQ(JsonInt(run.json, "count", "start_lag_us"), 200);  // every start's lag measured
  EXPECT_NE(run.json.find("\"requested_rate\": 200.0"), std::string::npos);
  double wall = std::stod(run.json.substr(run.json.find("\"wall_s\": ") + 10));
  EXPECT_GE(wall, 0.99);  // paced: the 200th start is meant for t = 995 ms
}

TEST(LoadTesterTest, SourceAddressesAreUsed) {
  FakeServer server(DnsRequestComplete, [](int, const std::string& request) {
    return FakeAction{FakeAction::kReply, DnsAnswer(request)};
  });
  LoadRun run = RunLoad({"--target", server.address(), "--count", "20", "--concurrency", "2",
                         "--source", "127.0.0.2-127.0.0.5"});
  ASSERT_EQ(run.command.exit_code, 0) << run.command.out << run.command.err;
  EXPECT_EQ(JsonInt(run.json, "ok"), 20) << run.json;
  EXPECT_EQ(JsonInt(run.json, "sources"), 4);
}

TEST(LoadTesterTest, WhoisEmptyRepliesAreShort) {
  FakeServer server(LineComplete, [](int index, const std::string& request) {
    if (request != "example.com\r\n") return FakeAction{FakeAction::kReply, "bad query"};
    if (index % 2 == 1) return FakeAction{FakeAction::kCloseSilently, ""};
    return FakeAction{FakeAction::kReply, "Domain Name: EXAMPLE.COM\r\n"};
  });
  LoadRun run =
      RunLoad({"--target", server.address(), "--proto", "whois", "--whois-query", "example.com",
               "--expect-substring", "EXAMPLE.COM", "--count", "12", "--concurrency", "1"});
  EXPECT_EQ(JsonInt(run.json, "ok"), 6) << run.json;
  EXPECT_EQ(JsonInt(run.json, "short", "errors"), 6);
  EXPECT_EQ(JsonInt(run.json, "wrong", "errors"), 0);
}

TEST(LoadTesterTest, RampReportsTheHighestPassingRate) {
  // Every answer from connection 60 on is wrong: the steps at 10/s and 20/s (2 s each, 20 + 40
  // connections) pass, the step at 30/s fails, and the ramp stops there. Slow steps leave
  // 33 ms or more between starts, so a busy machine cannot push one past a step's end.
  FakeServer server(DnsRequestComplete, [](int index, const std::string& request) {
    return FakeAction{FakeAction::kReply, DnsAnswer(request, /*wrong_id=*/index >= 60)};
  });
  LoadRun run = RunLoad({"--target", server.address(), "--ramp", "10:40:10", "--step-duration", "2",
                         "--max-p99-ms", "1000"});
  EXPECT_EQ(run.command.exit_code, 0) << run.command.out << run.command.err;
  EXPECT_NE(run.json.find("\"capacity_conn_per_s\": 20.0"), std::string::npos) << run.json;
  EXPECT_NE(run.command.out.find("capacity: 20 conn/s"), std::string::npos) << run.command.out;
  EXPECT_EQ(server.accepted(), 120);  // the 40/s step never ran
}

TEST(LoadTesterTest, RawBytesAreSentAsIsAndAnyReplyCounts) {
  FakeServer server(LineComplete, [](int index, const std::string& request) {
    if (request != std::string("PING\0\n", 6)) return FakeAction{FakeAction::kReply, "bad"};
    if (index % 4 == 3) return FakeAction{FakeAction::kCloseSilently, ""};
    return FakeAction{FakeAction::kReply, "PONG"};
  });
  std::string path = absl::StrCat(::testing::TempDir(), "/raw_", getpid(), ".bin");
  {
    std::ofstream file(path, std::ios::binary);
    file.write("PING\0\n", 6);
  }
  LoadRun run = RunLoad({"--target", server.address(), "--proto", "raw", "--raw-request", path,
                         "--expect-substring", "PONG", "--count", "8", "--concurrency", "1"});
  std::remove(path.c_str());
  EXPECT_EQ(JsonInt(run.json, "ok"), 6) << run.json << run.command.err;
  EXPECT_EQ(JsonInt(run.json, "short", "errors"), 2);
}

TEST(LoadTesterTest, TheReportNamesTheCoreThatRan) {
  FakeServer server(DnsRequestComplete, [](int, const std::string& request) {
    return FakeAction{FakeAction::kReply, DnsAnswer(request)};
  });
  for (const char* engine : {"uring", "epoll"}) {
    absl::StatusOr<CommandResult> run = RunCommand(
        {ONEPASS_LOAD_PATH, "--target", server.address(), "--engine", engine, "--count", "10",
         "--concurrency", "2", "--json", absl::StrCat(::testing::TempDir(), "/engine.json")},
        absl::Seconds(60));
    ASSERT_TRUE(run.ok());
    if (std::string(engine) == "uring" && run->exit_code == 1 &&
        run->err.find("--engine uring:") != std::string::npos) {
      GTEST_SKIP() << "this kernel cannot run the uring core: " << run->err;
    }
    EXPECT_EQ(run->exit_code, 0) << run->out << run->err;
    std::ifstream file(absl::StrCat(::testing::TempDir(), "/engine.json"));
    std::stringstream json;
    json << file.rdbuf();
    EXPECT_NE(json.str().find(absl::StrCat("\"engine\": \"", engine, "\"")), std::string::npos)
        << json.str();
    EXPECT_EQ(JsonInt(json.str(), "ok"), 10);
  }
}

TEST(LoadTesterTest, BadUsageExitsWithOne) {
  absl::StatusOr<CommandResult> missing = RunCommand({ONEPASS_LOAD_PATH}, absl::Seconds(20));
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->exit_code, 1);
  EXPECT_NE(missing->err.find("--target"), std::string::npos) << missing->err;
  absl::StatusOr<CommandResult> both = RunCommand(
      {ONEPASS_LOAD_PATH, "--target", "127.0.0.1:53", "--rate", "10", "--concurrency", "2"},
      absl::Seconds(20));
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->exit_code, 1);
  absl::StatusOr<CommandResult> help = RunCommand({ONEPASS_LOAD_PATH, "--help"}, absl::Seconds(20));
  ASSERT_TRUE(help.ok());
  EXPECT_NE((help->out + help->err).find("--concurrency"), std::string::npos);
  // Several queries per connection: a framed protocol (not whois), a valid window, the uring
  // core.
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--proto", "whois", "--whois-query", "x", "--queries-per-conn", "2"},
           {"--queries-per-conn", "2", "--pipeline", "3"},
           {"--queries-per-conn", "0"},
           {"--queries-per-conn", "2", "--engine", "epoll"},
           {"--engine", "kqueue"}}) {
    std::vector<std::string> argv = {ONEPASS_LOAD_PATH, "--target", "127.0.0.1:53"};
    argv.insert(argv.end(), args.begin(), args.end());
    absl::StatusOr<CommandResult> bad = RunCommand(argv, absl::Seconds(20));
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->exit_code, 1) << absl::StrJoin(args, " ") << ": " << bad->err;
  }
}

// The reference server's --help lists its own flags with their defaults, and exits 0.
TEST(LoadTesterTest, ReferenceHelpListsItsFlags) {
  absl::StatusOr<CommandResult> help =
      RunCommand({ONEPASS_REFERENCE_PATH, "--help"}, absl::Seconds(20));
  ASSERT_TRUE(help.ok());
  EXPECT_EQ(help->exit_code, 0) << help->err;
  EXPECT_NE(help->out.find("--dns-answer-bytes  (default: 0)"), std::string::npos) << help->out;
  EXPECT_NE(help->out.find("--backlog  (default: 65535)"), std::string::npos) << help->out;
}

}  // namespace
}  // namespace onepass::load::testing
