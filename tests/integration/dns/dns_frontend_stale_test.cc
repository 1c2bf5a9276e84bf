// Serve-stale (RFC 8767) end to end: onepassd's frontend in front of NSD caches an answer, NSD
// is killed and marked down, the answer expires; with --dns-serve-stale-seconds the client
// gets the expired answer with TTL 30 at once instead of SERVFAIL, counted in /metrics, and
// the fresh answer again once NSD is back; without the flag, SERVFAIL. With a slow backend
// (FakeUdpBackend) and --dns-stale-answer-client-timeout-ms: the stale answer when the timer
// fires, the backend's late answer refreshing the cache.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/integration/dns/nsd_process.h"
#include "tests/support/subprocess.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::DecodedResponse;
using testing::MakeQuery;

const std::string kSourceDir = ONEPASS_SOURCE_DIR;
const std::string kZone = kSourceDir + "/tests/data/example.com.zone";

struct Answer {
  DecodedResponse response;
  absl::Duration took;
};
absl::StatusOr<Answer> Ask(int port, const std::vector<uint8_t>& query) {
  const absl::Time start = absl::Now();
  auto replies = testing::ExchangeTcp(port, {query});
  if (!replies.ok()) return replies.status();
  if (replies->size() != 1) return absl::DataLossError("not one answer");
  auto decoded = testing::DecodeResponse((*replies)[0]);
  if (!decoded.ok()) return decoded.status();
  return Answer{*decoded, absl::Now() - start};
}

// Each record of `section` ("owner TTL class type rdata", DecodeResponse's form) with its TTL
// replaced by `ttl`.
std::vector<std::string> WithTtl(const std::vector<std::string>& section, const std::string& ttl) {
  std::vector<std::string> out;
  for (const std::string& record : section) {
    std::vector<std::string> fields = absl::StrSplit(record, ' ');
    if (fields.size() > 1) fields[1] = ttl;
    out.push_back(absl::StrJoin(fields, " "));
  }
  return out;
}

// kdig's answer over TCP with EDNS to `name` A through 127.0.0.1:`port`, as it prints it.
std::string Kdig(int port, const std::string& name) {
  auto result = onepass::testing::RunCommand({"kdig", "-p", std::to_string(port), "@127.0.0.1",
                                              "+tcp", "+edns", "+timeout=3", "+retry=0", name, "A"},
                                             absl::Seconds(10));
  if (!result.ok()) return "kdig did not run: " + result.status().ToString();
  return result->out;
}

class FrontendServeStale : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onepass::testing::ProgramExists("nsd")) GTEST_SKIP() << "nsd is not installed";
    auto nsd = testing::NsdProcess::Start({{"example.com", kZone}});
    ASSERT_TRUE(nsd.ok()) << nsd.status();
    nsd_ = *std::move(nsd);
  }

  // A frontend whose cached answers expire after 1 s, and which marks NSD down after one
  // timeout of 200 ms; `extra` flags added.
  void StartFrontend(std::vector<std::string> extra) {
    std::vector<std::string> flags = {
        "--dns-cache-max-ttl",      "1", "--dns-backend-timeout-ms", "200",
        "--dns-backend-down-after", "1", "--metrics-listen",         "127.0.0.1:0"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    auto frontend = testing::StartFrontend({testing::LoopbackBackend(nsd_->port())}, flags);
    ASSERT_TRUE(frontend.ok()) << frontend.status();
    frontend_ = *std::move(frontend);
  }

  // Caches www.example.com A, kills NSD, has it marked down (a query for another name times
  // out, the probe that follows too) and waits until the cached answer has expired. Returns the
  // answer as first cached.
  DecodedResponse CacheThenKillBackend() {
    auto fresh = Ask(frontend_->port(), MakeQuery("www.example.com", "A", {.id = 1}));
    EXPECT_TRUE(fresh.ok()) << fresh.status();
    if (!fresh.ok()) return {};
    EXPECT_EQ(fresh->response.rcode, 0);
    EXPECT_FALSE(fresh->response.answer.empty());
    // The same name as kdig asks it (with EDNS: another cache entry), when kdig is there.
    if (onepass::testing::ProgramExists("kdig")) {
      const std::string kdig = Kdig(frontend_->port(), "www.example.com");
      EXPECT_NE(kdig.find("status: NOERROR"), std::string::npos) << kdig;
    }
    const absl::Time cached = absl::Now();
    nsd_.reset();  // SIGTERM, waited for
    auto timeout = Ask(frontend_->port(), MakeQuery("mail.example.com", "A"));
    EXPECT_TRUE(timeout.ok() && timeout->response.rcode == 2) << "SERVFAIL after the deadline";
    EXPECT_TRUE(testing::WaitMarkedDown(*frontend_, 1)) << "its probe failed: down";
    absl::SleepFor(cached + absl::Milliseconds(1100) - absl::Now());  // past its 1 s
    return fresh->response;
  }

  std::unique_ptr<testing::NsdProcess> nsd_;
  std::unique_ptr<onepass::testing::ServerProcess> frontend_;
};

TEST_F(FrontendServeStale, BackendDownAnswerExpiredStaleAnswerWithTtl30ThenFreshWhenBack) {
  StartFrontend({"--dns-serve-stale-seconds", "60"});
  const int port = nsd_->port();
  const DecodedResponse fresh = CacheThenKillBackend();
  ASSERT_FALSE(HasFailure());

  auto stale = Ask(frontend_->port(), MakeQuery("WWW.example.COM", "A", {.id = 0x4242}));
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(stale->response.rcode, 0) << "a stale answer, not SERVFAIL";
  EXPECT_EQ(stale->response.id, 0x4242);
  EXPECT_LT(stale->took, absl::Milliseconds(150)) << "at once: the backend is known down";
  EXPECT_EQ(stale->response.answer, WithTtl(fresh.answer, "30"));
  EXPECT_EQ(stale->response.authority, WithTtl(fresh.authority, "30"));
  EXPECT_EQ(stale->response.additional, WithTtl(fresh.additional, "30"));
  EXPECT_EQ(stale->response.question, fresh.question);  // decoded lowercased
  EXPECT_EQ(
      testing::FrontendMetric(*frontend_, "onepass_dns_frontend_cache_total{result=\"stale\"}"), 1);

  // Nothing cached for this name: SERVFAIL at once, as without serve-stale.
  auto uncached = Ask(frontend_->port(), MakeQuery("ftp.example.com", "AAAA"));
  ASSERT_TRUE(uncached.ok()) << uncached.status();
  EXPECT_EQ(uncached->response.rcode, 2);
  EXPECT_EQ(
      testing::FrontendMetric(*frontend_, "onepass_dns_frontend_cache_total{result=\"stale\"}"), 1);

  // kdig, with EDNS: the stale answer says so (RFC 8914 EDE 3), and our own SERVFAIL says why
  // (EDE 22).
  if (!onepass::testing::ProgramExists("kdig")) GTEST_FAIL() << "kdig is not installed";
  const std::string stale_kdig = Kdig(frontend_->port(), "www.example.com");
  EXPECT_NE(stale_kdig.find("status: NOERROR"), std::string::npos) << stale_kdig;
  EXPECT_NE(stale_kdig.find("EDE: 3 (Stale Answer)"), std::string::npos) << stale_kdig;
  EXPECT_NE(stale_kdig.find("\t30\tIN\tA\t192.0.2.80"), std::string::npos) << stale_kdig;
  const std::string servfail_kdig = Kdig(frontend_->port(), "ftp.example.com");
  EXPECT_NE(servfail_kdig.find("status: SERVFAIL"), std::string::npos) << servfail_kdig;
  EXPECT_NE(servfail_kdig.find("EDE: 22 (No Reachable Authority)"), std::string::npos)
      << servfail_kdig;
  EXPECT_EQ(
      testing::FrontendMetric(*frontend_, "onepass_dns_frontend_cache_total{result=\"stale\"}"), 2);

  // NSD back on its port: a probe (every second) marks it up; fresh answers within 2 s.
  auto restarted = testing::NsdProcess::Start({{"example.com", kZone}}, port);
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  const absl::Time back = absl::Now();
  bool fresh_again = false;
  while (!fresh_again && absl::Now() - back < absl::Seconds(3)) {
    auto answer = Ask(frontend_->port(), MakeQuery("www.example.com", "A"));
    ASSERT_TRUE(answer.ok()) << answer.status();
    fresh_again = answer->response.answer == fresh.answer;
    if (!fresh_again) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(fresh_again) << "still stale 3 s after NSD came back";
}

TEST_F(FrontendServeStale, WithoutTheFlagAnExpiredAnswerIsServfail) {
  StartFrontend({});
  CacheThenKillBackend();
  ASSERT_FALSE(HasFailure());
  auto answer = Ask(frontend_->port(), MakeQuery("www.example.com", "A"));
  ASSERT_TRUE(answer.ok()) << answer.status();
  EXPECT_EQ(answer->response.rcode, 2);
  EXPECT_LT(answer->took, absl::Milliseconds(150));
  EXPECT_EQ(
      testing::FrontendMetric(*frontend_, "onepass_dns_frontend_cache_total{result=\"stale\"}"), 0);
}

// A backend that is up but slow: the client gets the stale answer after the client-response
// timer (RFC 8767 §5), not after the deadline, and the backend's late answer refreshes the
// cache without reaching the client twice.
TEST(FrontendStaleClientTimer, SlowBackendStaleAnswerAtTheTimerThenTheLateAnswerIsCached) {
  testing::FakeUdpBackend backend;
  ASSERT_NE(backend.port(), 0);
  backend.a_record_ttl = 1;
  backend.answering = true;
  auto started = testing::StartFrontend(
      {testing::LoopbackBackend(backend.port())},
      {"--dns-serve-stale-seconds", "60", "--dns-stale-answer-client-timeout-ms", "100",
       "--dns-backend-timeout-ms", "2000", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(started.ok()) << started.status();
  const onepass::testing::ServerProcess& frontend = **started;
  auto fresh = Ask(frontend.port(), MakeQuery("slow.example.com", "A", {.id = 1}));
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_EQ(fresh->response.answer.size(), 1u);
  const absl::Time cached = absl::Now();
  absl::SleepFor(cached + absl::Milliseconds(1100) - absl::Now());  // past its TTL of 1 s

  backend.delay_ms = 600;
  backend.a_record_ttl = 300;
  auto stale = Ask(frontend.port(), MakeQuery("slow.example.com", "A", {.id = 2}));
  ASSERT_TRUE(stale.ok()) << stale.status();
  EXPECT_EQ(stale->response.rcode, 0);
  EXPECT_EQ(stale->response.id, 2);
  EXPECT_EQ(stale->response.answer, WithTtl(fresh->response.answer, "30"));
  EXPECT_GE(stale->took, absl::Milliseconds(95)) << "not before the timer";
  EXPECT_LT(stale->took, absl::Milliseconds(550)) << "at the 100 ms timer, not the answer";
  EXPECT_EQ(testing::FrontendMetric(
                frontend, "onepass_dns_frontend_cache_total{result=\"stale_client_timeout\"}"),
            1);
  EXPECT_EQ(backend.received, 2);

  // The backend's answer (600 ms after it was asked) refreshed the cache: fresh, unasked.
  const std::string refreshed =
      "onepass_dns_frontend_queries_total{outcome=\"refreshed_after_stale\"}";
  const absl::Time give_up = absl::Now() + absl::Seconds(3);
  while (testing::FrontendMetric(frontend, refreshed) < 1 && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(testing::FrontendMetric(frontend, refreshed), 1);
  auto again = Ask(frontend.port(), MakeQuery("slow.example.com", "A", {.id = 3}));
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->response.answer.size(), 1u);
  EXPECT_TRUE(again->response.answer == WithTtl(fresh->response.answer, "300") ||
              again->response.answer == WithTtl(fresh->response.answer, "299"))
      << again->response.answer[0] << ": the refreshed answer, TTL 300 aged under 2 s";
  EXPECT_LT(again->took, absl::Milliseconds(300)) << "from the cache";
  EXPECT_EQ(backend.received, 2) << "not asked again";
}

}  // namespace
}  // namespace onepass::dns
