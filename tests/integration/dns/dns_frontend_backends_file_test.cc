// --dns-backends-file end to end: onepassd as a frontend of two fake UDP backends inside the
// test (FakeUdpBackend), the file rewritten and SIGHUP sent. A client waiting on a backend the
// new file no longer lists gets SERVFAIL at once (not at --dns-backend-timeout-ms), counted as
// reload_servfail; new queries go to the backends left, asked with kdig; a backend added by a
// reload gets queries, while a query waiting on one that stays gets its answer across the
// reload; a bad file on SIGHUP keeps the previous backends, and --check names its bad line.
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/integration/dns/kdig_comparison.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using onepass::testing::ServerProcess;
using onepass::testing::WaitFor;
using testing::FakeUdpBackend;
using testing::LoopbackBackend;
using testing::MakeQuery;

// Far above what the test waits for a SERVFAIL: an answer this late is the deadline's.
constexpr int kBackendTimeoutMs = 20000;

class BackendsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/dns_backends_file_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/backends.conf";
  }
  void TearDown() override {
    unlink(path_.c_str());
    unlink((path_ + ".new").c_str());
    rmdir(dir_.c_str());
  }
  // Replaced whole (a rename), as a deploy should: a reload never reads half a file.
  void WriteFile(const std::string& text) {
    const std::string next = path_ + ".new";
    std::ofstream(next) << text;
    ASSERT_EQ(rename(next.c_str(), path_.c_str()), 0);
  }
  void Start() {
    auto frontend =
        testing::StartFrontend({}, {"--dns-backends-file", path_, "--dns-max-backends", "4",
                                    "--dns-backend-timeout-ms", absl::StrCat(kBackendTimeoutMs),
                                    "--dns-backend-udp-timeout-ms", absl::StrCat(kBackendTimeoutMs),
                                    "--dns-cache-entries", "0", "--metrics-listen", "127.0.0.1:0"});
    ASSERT_TRUE(frontend.ok()) << frontend.status();
    frontend_ = *std::move(frontend);
  }
  // SIGHUP, then waits for the worker to serve the reload (or for `line` in the log).
  void Reload(const std::string& line = "serving reload") {
    ASSERT_EQ(kill(frontend_->pid(), SIGHUP), 0);
    ASSERT_TRUE(WaitFor(
        [&] {
          log_ += frontend_->ReadStderr();
          return absl::StrContains(log_, line);
        },
        absl::Seconds(10)))
        << log_;
    log_.clear();
  }
  double Metric(const std::string& name) { return testing::FrontendMetric(*frontend_, name); }
  double Forwarded(const FakeUdpBackend& backend) {
    return Metric(absl::StrCat("onepass_dns_frontend_backend_queries_total{backend=\"",
                               LoopbackBackend(backend.port()), "\",outcome=\"forwarded\"}"));
  }
  // kdig +tcp through the frontend: true when it printed NOERROR (the fake's echo).
  bool KdigAnswered(const std::string& name) {
    absl::StatusOr<std::string> answer =
        testing::KdigAnswer(frontend_->port(), /*tcp=*/true, {name, "A"});
    return answer.ok() && absl::StrContains(*answer, "status: NOERROR");
  }

  std::string dir_;
  std::string path_;
  std::unique_ptr<ServerProcess> frontend_;
  std::string log_;
};

using Reply = absl::StatusOr<std::vector<std::vector<uint8_t>>>;

TEST_F(BackendsFileTest, RemovedBackendsWaitingClientGetsServfailAtOnce) {
  if (!onepass::testing::ProgramExists("kdig")) GTEST_SKIP() << "kdig is not installed";
  FakeUdpBackend silent;  // never answers
  FakeUdpBackend working;
  working.answering = true;
  ASSERT_GT(silent.port(), 0);
  ASSERT_GT(working.port(), 0);
  WriteFile(absl::StrCat("# two backends\n", LoopbackBackend(silent.port()), "\n\n",
                         LoopbackBackend(working.port()), "  # answers\n"));
  Start();
  const int port = frontend_->port();
  // Queries until one waits on the silent backend (ties rotate: the first or the second);
  // those the working one gets are answered at once.
  std::future<Reply> waiting;
  uint16_t waiting_id = 0;
  for (uint16_t id = 0x4200; id < 0x4208 && silent.received == 0; ++id) {
    const std::vector<uint8_t> query = MakeQuery("waiting.example.com", "A", {.id = id});
    waiting = std::async(std::launch::async, [port, query] {
      return testing::ExchangeTcp(port, {query}, absl::Seconds(30));
    });
    waiting_id = id;
    ASSERT_TRUE(WaitFor(
        [&] {
          return silent.received > 0 ||
                 waiting.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        },
        absl::Seconds(5)));
  }
  ASSERT_EQ(silent.received, 1);
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  EXPECT_EQ(Forwarded(silent), 1);

  WriteFile(absl::StrCat(LoopbackBackend(working.port()), "\n"));
  const absl::Time reloaded_at = absl::Now();
  Reload();
  ASSERT_EQ(waiting.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const absl::Duration took = absl::Now() - reloaded_at;
  Reply replies = waiting.get();
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), 1u);
  auto answer = testing::DecodeResponse((*replies)[0]);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->id, waiting_id);
  EXPECT_EQ(answer->rcode, 2) << "SERVFAIL";
  EXPECT_LT(took, absl::Milliseconds(kBackendTimeoutMs) / 4) << "at once, not at the deadline";
  EXPECT_EQ(Metric("onepass_dns_frontend_queries_total{outcome=\"reload_servfail\"}"), 1);
  EXPECT_EQ(Metric("onepass_dns_frontend_queries_total{outcome=\"timeout_servfail\"}"), 0);
  // The removed backend's series are gone; the one left keeps its count.
  EXPECT_EQ(Forwarded(silent), -1);
  const double before = Forwarded(working);
  const int received_before = working.received;

  for (int i = 0; i < 4; ++i) EXPECT_TRUE(KdigAnswered(absl::StrCat("new", i, ".example.com")));
  EXPECT_EQ(silent.received, 1);
  EXPECT_EQ(working.received, received_before + 4);
  EXPECT_EQ(Forwarded(working), before + 4);
  EXPECT_EQ(frontend_->Stop(), 0);
}

TEST_F(BackendsFileTest, AddedBackendGetsQueriesAndOneThatStaysKeepsItsQuery) {
  if (!onepass::testing::ProgramExists("kdig")) GTEST_SKIP() << "kdig is not installed";
  FakeUdpBackend first(absl::Milliseconds(800));  // answers, late enough to span a reload
  first.answering = true;
  FakeUdpBackend added;
  added.answering = true;
  ASSERT_GT(first.port(), 0);
  ASSERT_GT(added.port(), 0);
  WriteFile(absl::StrCat(LoopbackBackend(first.port()), "\n"));
  Start();
  const int port = frontend_->port();
  const std::vector<uint8_t> query = MakeQuery("spanning.example.com", "A", {.id = 0x5151});
  auto pending = std::async(std::launch::async,
                            [&] { return testing::ExchangeTcp(port, {query}, absl::Seconds(30)); });
  ASSERT_TRUE(WaitFor([&] { return first.received >= 1; }, absl::Seconds(5)));
  EXPECT_EQ(Forwarded(added), -1);

  WriteFile(absl::StrCat(LoopbackBackend(first.port()), "\n", LoopbackBackend(added.port()), "\n"));
  Reload();
  Reply replies = pending.get();
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), 1u);
  auto answer = testing::DecodeResponse((*replies)[0]);
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->id, 0x5151);
  EXPECT_EQ(answer->rcode, 0) << "the kept backend's answer, not SERVFAIL";
  EXPECT_EQ(Metric("onepass_dns_frontend_queries_total{outcome=\"reload_servfail\"}"), 0);
  EXPECT_EQ(Forwarded(first), 1);  // its series went on across the reload

  first.delay_ms = 0;
  // Sequential queries: nothing outstanding between them, so the tie rotates over both.
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(KdigAnswered(absl::StrCat("after", i, ".example.com")));
  EXPECT_GE(added.received, 1);
  EXPECT_EQ(Forwarded(added), added.received);
  EXPECT_EQ(Forwarded(first), first.received);
  EXPECT_EQ(frontend_->Stop(), 0);
}

TEST_F(BackendsFileTest, BadFileOnReloadKeepsTheBackendsAndCheckNamesTheLine) {
  FakeUdpBackend working;
  working.answering = true;
  ASSERT_GT(working.port(), 0);
  const std::string good = absl::StrCat(LoopbackBackend(working.port()), "\n");
  WriteFile(good);
  Start();
  const std::string bad = absl::StrCat(good, "127.0.0.1\n");
  WriteFile(bad);
  Reload("reload failed");
  const int port = frontend_->port();
  const std::vector<uint8_t> query = MakeQuery("still.example.com", "A", {.id = 0x6161});
  Reply replies = testing::ExchangeTcp(port, {query}, absl::Seconds(5));
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), 1u);
  auto answer = testing::DecodeResponse((*replies)[0]);
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->rcode, 0);
  EXPECT_EQ(Forwarded(working), 1);
  EXPECT_EQ(frontend_->Stop(), 0);

  auto check = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {onepass::testing::OnepassdPath(),
                                     "--check",
                                     "--handler",
                                     "dns",
                                     "--dns-backends-file",
                                     path_};
    args.insert(args.end(), extra.begin(), extra.end());
    absl::StatusOr<onepass::testing::CommandResult> result =
        onepass::testing::RunCommand(args, absl::Seconds(20));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : onepass::testing::CommandResult{};
  };
  onepass::testing::CommandResult result = check({});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(result.err + result.out, path_ + ":2: ")) << result.err;
  WriteFile(good);
  result = check({});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(absl::StrContains(result.out + result.err, LoopbackBackend(working.port())))
      << result.out;
  result = check({"--dns-backend", LoopbackBackend(working.port())});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(result.err, "exclude each other")) << result.err;
}

}  // namespace
}  // namespace onepass::dns
