// The DNS-over-TCP frontend end to end: the real onepassd with --dns-backend forwarding to NSD
// (started by the test on loopback, serving tests/data/example.com.zone), and to a fake UDP
// backend inside the test for what NSD will not do on demand (stay silent, come back).
//
// The corpus check (108 queries: differential_queries.txt and frontend_nsd_queries.txt): each
// sent over TCP through onepassd gets byte for byte the answer NSD gives over UDP to the same
// query (same ID), and kdig +tcp through the frontend prints what kdig +notcp gets straight
// from NSD (header, EDNS, every section), with the cache off and on.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/differential_corpus.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/integration/dns/kdig_comparison.h"
#include "tests/integration/dns/nsd_process.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::CacheCounter;
using testing::CorpusQuery;
using testing::ExchangeTcp;
using testing::ExpectBytesAgree;
using testing::ExpectKdigAgrees;
using testing::FakeUdpBackend;
using testing::LoopbackBackend;
using testing::MakeQuery;
using testing::ReadCorpus;
using testing::StartFrontend;

const std::string kSourceDir = ONEPASS_SOURCE_DIR;

absl::StatusOr<testing::DecodedResponse> AskTcp(int port, const std::vector<uint8_t>& query) {
  auto replies = ExchangeTcp(port, {query});
  if (!replies.ok()) return replies.status();
  if (replies->size() != 1) return absl::DataLossError(absl::StrCat(replies->size(), " replies"));
  return testing::DecodeResponse((*replies)[0]);
}

class FrontendWithNsd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!onepass::testing::ProgramExists("nsd")) GTEST_FAIL() << "nsd is not installed";
    auto nsd =
        testing::NsdProcess::Start({{"example.com", kSourceDir + "/tests/data/example.com.zone"}});
    ASSERT_TRUE(nsd.ok()) << nsd.status();
    nsd_ = *std::move(nsd);
  }
  std::unique_ptr<testing::NsdProcess> nsd_;
};

// The queries asked through the frontend: the zone-mode differential corpus and a few more.
std::vector<CorpusQuery> NsdCorpus() {
  std::vector<CorpusQuery> corpus =
      ReadCorpus(kSourceDir + "/tests/integration/dns/differential_queries.txt");
  for (CorpusQuery& q :
       ReadCorpus(kSourceDir + "/tests/integration/dns/frontend_nsd_queries.txt")) {
    corpus.push_back(std::move(q));
  }
  return corpus;
}

// Every corpus query through the frontend gets NSD's own UDP answer, byte for byte. With the
// cache on, each is asked twice: the second answer comes from the cache and must be the same.
void CompareCorpus(int nsd_port, bool cache) {
  auto frontend = StartFrontend(
      {LoopbackBackend(nsd_port)},
      {"--dns-cache-entries", cache ? "1000" : "0", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<CorpusQuery> corpus = NsdCorpus();
  ASSERT_GE(corpus.size(), 50u);
  const int compared = ExpectBytesAgree((*frontend)->port(), nsd_port, corpus, cache);
  const double hits = CacheCounter(**frontend, "hit");
  std::cout << corpus.size() << " corpus queries, " << compared << " answers compared byte for "
            << "byte, cache " << (cache ? "on" : "off") << ", " << hits << " cache hits\n";
  if (cache) {
    // Every answer with a TTL and NOERROR/NXDOMAIN is a hit the second time.
    EXPECT_GE(hits, corpus.size() / 2.0);
  } else {
    EXPECT_EQ(hits, 0);
  }
}

TEST_F(FrontendWithNsd, CorpusAnswersAreNsdUdpAnswersByteForByteWithoutCache) {
  CompareCorpus(nsd_->port(), /*cache=*/false);
}

TEST_F(FrontendWithNsd, CorpusAnswersAreNsdUdpAnswersByteForByteWithCache) {
  CompareCorpus(nsd_->port(), /*cache=*/true);
}

// kdig +tcp through the frontend prints what kdig +notcp gets straight from NSD, for the whole
// corpus (AXFR and IXFR aside: kdig sends them over TCP only).
void CompareKdig(int nsd_port, bool cache) {
  if (!onepass::testing::ProgramExists("kdig")) GTEST_SKIP() << "kdig is not installed";
  auto frontend =
      StartFrontend({LoopbackBackend(nsd_port)}, {"--dns-cache-entries", cache ? "1000" : "0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const int compared = ExpectKdigAgrees((*frontend)->port(), nsd_port, NsdCorpus(), cache);
  std::cout << compared << " kdig answers compared, cache " << (cache ? "on" : "off") << "\n";
  EXPECT_GE(compared, cache ? 100 : 50);
}

TEST_F(FrontendWithNsd, KdigOverTcpThroughFrontendPrintsWhatKdigOverUdpGetsFromNsd) {
  CompareKdig(nsd_->port(), /*cache=*/false);
}

TEST_F(FrontendWithNsd, KdigOverTcpThroughCachingFrontendPrintsWhatKdigOverUdpGetsFromNsd) {
  CompareKdig(nsd_->port(), /*cache=*/true);
}

TEST_F(FrontendWithNsd, PipelinedQueriesAllAnsweredWithTheirOwnIds) {
  auto frontend = StartFrontend({LoopbackBackend(nsd_->port())});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  std::vector<std::vector<uint8_t>> queries;
  std::set<uint16_t> ids;
  for (int i = 0; i < 200; ++i) {
    const uint16_t id = static_cast<uint16_t>(1000 + i * 3);
    queries.push_back(MakeQuery(i % 2 ? "www.example.com" : "example.com", "A", {.id = id}));
    ids.insert(id);
  }
  auto replies = ExchangeTcp((*frontend)->port(), queries);
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), queries.size());
  std::set<uint16_t> got;
  for (const auto& reply : *replies) {
    auto decoded = testing::DecodeResponse(reply);
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(decoded->rcode, 0);
    got.insert(decoded->id);
  }
  EXPECT_EQ(got, ids);
}

// RFC 7766 §6.2.1.1: a query a client sends on its connection while an earlier one waits on
// the backend is forwarded at once, and the answers come back as the backend gives them, out
// of order (a stub multiplexes its users' queries on one connection). It used to be read only
// once the first was answered.
TEST(FrontendPipelining, AQuerySentWhileAnotherWaitsGoesUpstreamAtOnceAnswersOutOfOrder) {
  std::mutex mutex;
  std::vector<std::pair<uint16_t, std::vector<uint8_t>>> held;  // guarded by mutex
  FakeUdpBackend backend([&](FakeUdpBackend&, uint16_t from, absl::Span<const uint8_t> query) {
    std::lock_guard<std::mutex> lock(mutex);
    held.emplace_back(from, std::vector<uint8_t>(query.begin(), query.end()));
  });
  ASSERT_GT(backend.port(), 0);
  auto frontend = testing::StartFrontend({LoopbackBackend(backend.port())},
                                         {"--dns-backend-timeout-ms", "5000"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>((*frontend)->port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  auto send_query = [&](const char* name, uint16_t id) {
    const std::vector<uint8_t> frame = testing::Framed(MakeQuery(name, "A", {.id = id}));
    return send(fd, frame.data(), frame.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(frame.size());
  };
  auto held_count = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    return held.size();
  };
  ASSERT_TRUE(send_query("one.example", 1));
  ASSERT_TRUE(onepass::testing::WaitFor([&] { return held_count() == 1; }, absl::Seconds(5)));
  ASSERT_TRUE(send_query("two.example", 2));
  ASSERT_TRUE(onepass::testing::WaitFor([&] { return held_count() == 2; }, absl::Seconds(3)))
      << "the second query waited for the first's answer";
  // The backend answers the second first.
  for (const size_t i : {size_t{1}, size_t{0}}) {
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_TRUE(backend.SendFrom(held[i].first, backend.Echo(held[i].second)));
  }
  std::string bytes;
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  std::vector<uint16_t> ids;
  while (ids.size() < 2 && absl::Now() < give_up) {
    pollfd ready{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    char buffer[4096];
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
    auto frames = testing::SplitFrames(bytes);
    if (frames.ok() && frames->size() == 2) {
      for (const auto& frame : *frames)
        ids.push_back(static_cast<uint16_t>(frame[0] << 8 | frame[1]));
    }
  }
  close(fd);
  EXPECT_EQ(ids, (std::vector<uint16_t>{2, 1}));
}

TEST(FrontendHealth, TimeoutServfailThenDownThenImmediateServfailThenBackWithinTwoSeconds) {
  FakeUdpBackend backend;
  auto frontend = StartFrontend({LoopbackBackend(backend.port())},
                                {"--dns-backend-timeout-ms", "1500", "--dns-backend-down-after",
                                 "2", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A", {.id = 77});
  for (int i = 0; i < 2; ++i) {
    const absl::Time start = absl::Now();
    auto answer = AskTcp((*frontend)->port(), query);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->rcode, 2) << "SERVFAIL after the deadline";
    EXPECT_EQ(answer->id, 77);
    EXPECT_GE(took, absl::Milliseconds(1490));
    EXPECT_LT(took, absl::Seconds(10));
  }
  // Suspect after the timeouts; marked down when two probes in a row have gone unanswered.
  ASSERT_TRUE(testing::WaitMarkedDown(**frontend, 1));
  // Marked down: SERVFAIL at once.
  {
    const absl::Time start = absl::Now();
    auto answer = AskTcp((*frontend)->port(), query);
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->rcode, 2);
    // Far below the 1.5 s deadline even on a loaded sanitizer build: not waited for.
    EXPECT_LT(absl::Now() - start, absl::Milliseconds(1000));
  }
  // Back: a probe (every second) finds it; answers flow within 2 s.
  backend.answering = true;
  const absl::Time back = absl::Now();
  bool answered = false;
  while (absl::Now() - back < absl::Seconds(2) && !answered) {
    auto answer = AskTcp((*frontend)->port(), query);
    ASSERT_TRUE(answer.ok()) << answer.status();
    answered = answer->rcode == 0;
    if (!answered) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(answered) << "not answering 2 s after the backend came back";
}

// A query, and how long its answer took.
struct Timed {
  int rcode = -1;
  absl::Duration took;
};
Timed AskTimed(int port, const std::vector<uint8_t>& query) {
  const absl::Time start = absl::Now();
  auto answer = AskTcp(port, query);
  return {answer.ok() ? answer->rcode : -1, absl::Now() - start};
}

TEST_F(FrontendWithNsd, NsdKilledServfailDownImmediateServfailRestartedAnswersWithinTwoSeconds) {
  auto frontend =
      StartFrontend({LoopbackBackend(nsd_->port())},
                    {"--dns-backend-timeout-ms", "1500", "--dns-backend-down-after", "2",
                     "--dns-cache-entries", "0", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const int port = nsd_->port();
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  EXPECT_EQ(AskTimed((*frontend)->port(), query).rcode, 0);
  nsd_.reset();  // killed (SIGTERM, waited for)
  for (int i = 0; i < 2; ++i) {
    const Timed timed = AskTimed((*frontend)->port(), query);
    EXPECT_EQ(timed.rcode, 2) << "SERVFAIL at the deadline";
    EXPECT_GE(timed.took, absl::Milliseconds(1490));
    EXPECT_LT(timed.took, absl::Seconds(10));
  }
  ASSERT_TRUE(testing::WaitMarkedDown(**frontend, 1)) << "its probes failed: down";
  const Timed down = AskTimed((*frontend)->port(), query);
  EXPECT_EQ(down.rcode, 2);
  // Far below the 1.5 s deadline even on a loaded sanitizer build: not waited for.
  EXPECT_LT(down.took, absl::Milliseconds(1000)) << "marked down: SERVFAIL at once";
  auto restarted = testing::NsdProcess::Start(
      {{"example.com", kSourceDir + "/tests/data/example.com.zone"}}, port);
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  const absl::Time back = absl::Now();  // NSD answers from here (Start waits for it)
  bool answered = false;
  while (!answered && absl::Now() - back < absl::Seconds(2)) {
    answered = AskTimed((*frontend)->port(), query).rcode == 0;
    if (!answered) absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_TRUE(answered) << "not answering 2 s after NSD came back";
}

// NSD as Debian ships it rate-limits responses (RRL: 200/s per /24, every second dropped one
// slipped back with TC=1), and every query of the frontend comes from one address. Dropped UDP
// queries are retried over TCP (which RRL does not limit) and slipped ones too, so no client
// query fails, and the backend, whose probes are answered, is never marked down.
TEST_F(FrontendWithNsd, DefaultRrlOfNsdFailsNoQueryAndNeverMarksItDown) {
  auto frontend = StartFrontend({LoopbackBackend(nsd_->port())},
                                {"--dns-cache-entries", "0", "--dns-backend-udp-timeout-ms", "50",
                                 "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  constexpr int kThreads = 8;
  // Far above 200/s for 3 s (RRL counts per second: a shorter burst can slip through), and
  // bounded in count.
  constexpr int kQueriesPerThread = 5000;
  const absl::Duration kRun = absl::Seconds(3);
  std::atomic<int> failures{0}, answered{0};
  std::vector<std::thread> threads;
  const absl::Time start = absl::Now();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      // One name: RRL keeps a bucket per name and prefix, and on a slow machine (TSan, a busy
      // CI) three names shared the rate and stayed under 200/s each.
      for (int i = 0; i < kQueriesPerThread && absl::Now() - start < kRun; ++i) {
        auto answer = AskTcp((*frontend)->port(),
                             MakeQuery("www.example.com", "A", {.id = static_cast<uint16_t>(i)}));
        if (answer.ok() && answer->rcode == 0 && !answer->answer.empty()) {
          ++answered;
        } else {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string metrics = onepass::testing::HttpGet((*frontend)->metrics_address(), "/metrics");
  const auto value = [&](const std::string& name) {
    return onepass::testing::MetricValue(metrics, name);
  };
  std::printf(
      "%d answered, %d failed in %s; UDP timeouts retried over TCP %.0f, TC=1 retried "
      "%.0f\n",
      answered.load(), failures.load(), absl::FormatDuration(absl::Now() - start).c_str(),
      value("onepass_dns_frontend_tcp_retries_total{result=\"udp_timeout\"}"),
      value("onepass_dns_frontend_tcp_retries_total{result=\"sent\"}"));
  EXPECT_EQ(failures, 0);
  EXPECT_GT(answered, 400) << "too few queries to meet the rate limit";
  EXPECT_EQ(value("onepass_dns_frontend_backend_events_total{event=\"marked_down\"}"), 0);
  // RRL did act: otherwise this test proves nothing.
  EXPECT_GT(value("onepass_dns_frontend_tcp_retries_total{result=\"udp_timeout\"}") +
                value("onepass_dns_frontend_tcp_retries_total{result=\"sent\"}"),
            0);
}

TEST_F(FrontendWithNsd, OneOfTwoBackendsSilentNoFailuresOnceMarkedDown) {
  FakeUdpBackend silent;
  auto frontend = StartFrontend({LoopbackBackend(nsd_->port()), LoopbackBackend(silent.port())},
                                {"--dns-backend-timeout-ms", "200", "--dns-backend-down-after", "2",
                                 "--dns-cache-entries", "0", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();
  const std::vector<uint8_t> query = MakeQuery("www.example.com", "A");
  // Until the silent one is marked down, some queries go to it and time out.
  for (int i = 0; i < 20 && silent.received < 1; ++i) {
    ASSERT_TRUE(AskTcp((*frontend)->port(), query).ok());
  }
  ASSERT_GE(silent.received, 1) << "no query reached the silent backend";
  ASSERT_TRUE(testing::WaitMarkedDown(**frontend, 1))
      << "the silent backend's probes failed: "
      << onepass::testing::HttpGet((*frontend)->metrics_address(), "/metrics");
  int failures = 0;
  for (int i = 0; i < 100; ++i) {
    auto answer = AskTcp((*frontend)->port(), query);
    ASSERT_TRUE(answer.ok()) << answer.status();
    if (answer->rcode != 0) ++failures;
  }
  EXPECT_EQ(failures, 0);
}

// --check in frontend mode names each backend and what it must be configured with (response
// rate limiting off or the frontend exempt, per server), and opens nothing.
TEST(FrontendCheck, NamesEachBackendAndTheRateLimitSettingsItNeeds) {
  auto result = onepass::testing::RunCommand(
      {onepass::testing::OnepassdPath(), "--check", "--handler", "dns", "--listen", "127.0.0.1:0",
       "--dns-backend", "127.0.0.1:5301", "--dns-backend", "127.0.0.2:5302"},
      absl::Seconds(20));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 0) << result->err;
  EXPECT_NE(result->out.find("backend 127.0.0.1:5301: UDP, TCP for retries\n"), std::string::npos)
      << result->out;
  EXPECT_NE(result->out.find("backend 127.0.0.2:5302"), std::string::npos) << result->out;
  for (const char* server : {"NSD rrl-ratelimit: 0", "Knot mod-rrl whitelist", "exempt-clients",
                             "Unbound ip-ratelimit: 0"}) {
    EXPECT_NE(result->out.find(server), std::string::npos) << server << ": " << result->out;
  }
  EXPECT_NE(result->out.find("check: dns data OK"), std::string::npos) << result->out;
}

}  // namespace
}  // namespace onepass::dns
