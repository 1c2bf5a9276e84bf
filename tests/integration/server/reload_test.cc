// SIGHUP reloads the handler's data: the real onepassd --handler dns with a zone file in a temp
// directory, a real client (kdig) to see the new answer, and a load loop of raw DNS-over-TCP
// queries running through the reload that must see no failed connection. A broken zone file
// and SIGHUP keep the previous data. Also: repeated --zone flags all serve (common/arguments.h).
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::ServerProcess;
using testing::StatValue;
using testing::TcpClient;

std::string ZoneText(int serial, absl::string_view www_address) {
  return absl::StrCat(
      "$ORIGIN reload.test.\n$TTL 300\n"
      "@   IN SOA ns.reload.test. hostmaster.reload.test. ",
      serial,
      " 3600 600 86400 300\n"
      "@   IN NS  ns.reload.test.\n"
      "ns  IN A   192.0.2.53\n"
      "www IN A   ",
      www_address, "\n");
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::trunc);
  file << text;
}

// A DNS query for www.reload.test A over TCP (RFC 1035 §4.2.2: 2-byte length prefix).
std::string WwwQuery() {
  const std::string message(
      "\x12\x34\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00"
      "\x03www\x06reload\x04test\x00\x00\x01\x00\x01",
      12 + 17 + 4);
  return std::string(1, '\0') + std::string(1, static_cast<char>(message.size())) + message;
}

// The A record's address as it appears in the answer's RDATA.
std::string AddressBytes(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return std::string(
      {static_cast<char>(a), static_cast<char>(b), static_cast<char>(c), static_cast<char>(d)});
}

std::string Kdig(int port, const std::string& name) {
  absl::StatusOr<CommandResult> kdig =
      RunCommand({"kdig", "+tcp", "+short", "+time=3", "+retry=0", "@127.0.0.1", "-p",
                  absl::StrCat(port), name, "A"},
                 absl::Seconds(10));
  return kdig.ok() ? kdig->out : "";
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "onepass-reload-XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~TempDir() {
    if (!path_.empty()) (void)RunCommand({"rm", "-rf", path_});
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ReloadTest, SighupSwapsTheZoneWithoutDroppingAConnection) {
  if (!testing::ProgramExists("kdig")) GTEST_SKIP() << "kdig is not installed";
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string zone = dir.path() + "/reload.test.zone";
  WriteFile(zone, ZoneText(1, "198.51.100.1"));
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start(
      // The load's client reads each answer until the server closes: the single pass.
      {"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "2", "--zone", zone,
       "--keepalive-ms", "0"});
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  EXPECT_EQ(Kdig(port, "www.reload.test"), "198.51.100.1\n");

  // Load during the reload: every query must get a whole NOERROR answer, old or new.
  const std::string old_address = AddressBytes(198, 51, 100, 1);
  const std::string new_address = AddressBytes(198, 51, 100, 2);
  std::atomic<bool> stop{false};
  std::atomic<int> queries{0}, failures{0}, new_answers{0};
  std::string first_failure;
  std::thread load([&] {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (!stop.load() && absl::Now() < give_up) {
      absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port);
      absl::StatusOr<std::string> reply = absl::UnknownError("not connected");
      if (client.ok() && client->Send(WwwQuery()).ok()) reply = client->ReadUntilClose();
      ++queries;
      const bool whole = reply.ok() && reply->size() > 16 && ((*reply)[5] & 0x0f) == 0;
      if (whole && absl::StrContains(*reply, new_address)) {
        ++new_answers;
      } else if (!whole || !absl::StrContains(*reply, old_address)) {
        if (failures++ == 0) {
          first_failure = reply.ok() ? absl::StrCat(reply->size(), " bytes")
                                     : std::string(reply.status().message());
        }
      }
    }
  });

  // The load runs on the old data first.
  EXPECT_TRUE(testing::WaitFor([&] { return queries.load() >= 10; }, absl::Seconds(5)));
  WriteFile(zone, ZoneText(2, "198.51.100.2"));
  ASSERT_EQ(kill((*server)->pid(), SIGHUP), 0);
  std::string answer;
  testing::WaitFor(
      [&] {
        answer = Kdig(port, "www.reload.test");
        return answer == "198.51.100.2\n";
      },
      absl::Seconds(10), absl::Milliseconds(100));
  EXPECT_EQ(answer, "198.51.100.2\n") << (*server)->ReadStderr();
  // Some load after the switch too.
  testing::WaitFor([&] { return new_answers.load() >= 20; }, absl::Seconds(2));
  stop = true;
  load.join();
  EXPECT_GT(queries.load(), 20);
  EXPECT_GT(new_answers.load(), 0);
  EXPECT_EQ(failures.load(), 0) << first_failure;

  // A broken zone: the error is logged and the previous data keeps being served.
  WriteFile(zone, "$ORIGIN reload.test.\n@ IN SOA this is not a zone\n");
  ASSERT_EQ(kill((*server)->pid(), SIGHUP), 0);
  std::string log;
  // The previous data is freed by a thread at nice 19 (server/restart/data_releaser.cc): on a
  // busy machine its line may come after the failed reload's, so both are waited for.
  testing::WaitFor(
      [&] {
        log += (*server)->ReadStderr();
        return absl::StrContains(log, "reload failed: ") &&
               absl::StrContains(log, "freed the previous data");
      },
      absl::Seconds(10));
  EXPECT_TRUE(absl::StrContains(log, "reload failed: ")) << log;
  EXPECT_TRUE(absl::StrContains(log, "still serving the previous data")) << log;
  // The good reload said where its time went, and its replaced data was freed off the workers.
  for (const char* phase :
       {"reloaded dns data in ", "(read ", ", parse ", ", index ", ", precompile ", ", swap "}) {
    EXPECT_TRUE(absl::StrContains(log, phase)) << phase << " missing from: " << log;
  }
  EXPECT_TRUE(absl::StrContains(log, "freed the previous data (1 generation)")) << log;
  EXPECT_EQ(Kdig(port, "www.reload.test"), "198.51.100.2\n");

  EXPECT_EQ((*server)->Stop(), 0);
  const std::string out = (*server)->ReadStdout();
  EXPECT_EQ(StatValue(out, "reloads"), 1) << out;
  EXPECT_EQ(StatValue(out, "reload_failures"), 1) << out;
  EXPECT_EQ(StatValue(out, "errors"), 0) << out;
}

// Repeated list flags merge (common/arguments.h): both zones serve, also with the hyphenated
// spelling and mixed with a comma list.
TEST(ListFlagsTest, RepeatedZoneFlagsAllServe) {
  if (!testing::ProgramExists("kdig")) GTEST_SKIP() << "kdig is not installed";
  const std::string data = ONEPASS_SOURCE_DIR "/tests/data/";
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--zone",
                            data + "example.com.zone", "--zone=" + data + "example.net.zone"});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(Kdig((*server)->port(), "www.example.com"), "192.0.2.80\n");
  EXPECT_EQ(Kdig((*server)->port(), "www.example.net"), "198.51.100.80\n");
  EXPECT_EQ((*server)->Stop(), 0);
  const std::string log = (*server)->ReadStderr();
  EXPECT_TRUE(absl::StrContains(log, "serving zone example.com.")) << log;
  EXPECT_TRUE(absl::StrContains(log, "serving zone example.net.")) << log;
}

}  // namespace
}  // namespace onepass
