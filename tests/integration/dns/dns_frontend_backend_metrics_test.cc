// The frontend's per-backend metrics (label backend="ADDR:PORT"), read with curl from
// /metrics: three fake backends, one that answers, one that rate-limits the frontend as a
// backend's RRL does (drops every other query, and "slips" the rest as TC=1 answers), and one
// that is silent. Each backend's counts must be what that backend itself saw and did, and
// only the silent one is held down, so an operator can tell rate limiting from an outage; and
// promtool accepts the exposition.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/integration/dns/fake_udp_backend.h"
#include "tests/integration/dns/frontend_support.h"
#include "tests/support/metrics_client.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns {
namespace {

using testing::FakeUdpBackend;
using testing::MakeQuery;

// A backend whose RRL limits the frontend: of the client queries (RD set), every other one
// goes unanswered and the rest are answered with TC=1 and no records; its health probes (RD
// clear, SOA) are answered, as RRL answers most of what it is sent.
class RateLimitingBackend {
 public:
  RateLimitingBackend()
      : udp_([this](FakeUdpBackend& udp, uint16_t port, absl::Span<const uint8_t> query) {
          if ((query[2] & 0x01) == 0) {  // RD clear: a probe
            ++probes;
            udp.SendFrom(port, udp.Echo(query));
          } else if (queries++ % 2 == 0) {
            ++dropped;
          } else {
            std::vector<uint8_t> slipped = udp.Echo(query);
            slipped[2] |= 0x02;  // TC
            udp.SendFrom(port, slipped);
            ++truncated;
          }
        }) {}
  int port() const { return udp_.port(); }

  std::atomic<int> queries{0};
  std::atomic<int> dropped{0};
  std::atomic<int> truncated{0};
  std::atomic<int> probes{0};

 private:
  FakeUdpBackend udp_;  // last: its thread uses the counts
};

std::string Sample(const std::string& family, int port, const std::string& label = "") {
  return absl::StrCat("onepass_dns_frontend_", family, "{backend=\"127.0.0.1:", port, "\"",
                      label.empty() ? "" : ",", label, "}");
}
std::string Queries(int port, const std::string& outcome) {
  return Sample("backend_queries_total", port, absl::StrCat("outcome=\"", outcome, "\""));
}
std::string Probes(int port, const std::string& result) {
  return Sample("backend_probes_total", port, absl::StrCat("result=\"", result, "\""));
}
std::string Down(int port) { return Sample("backend_down", port); }

TEST(FrontendBackendMetrics, EachBackendsRateLimitSymptomsApartFromDown) {
  FakeUdpBackend healthy;
  healthy.answering = true;
  RateLimitingBackend limiting;
  FakeUdpBackend silent;
  ASSERT_GT(healthy.port(), 0);
  ASSERT_GT(limiting.port(), 0);
  ASSERT_GT(silent.port(), 0);
  // No TCP listens on the fakes' ports: a retry over TCP fails, and its query with it.
  auto frontend = testing::StartFrontend(
      {testing::LoopbackBackend(healthy.port()), testing::LoopbackBackend(limiting.port()),
       testing::LoopbackBackend(silent.port())},
      {"--dns-cache-entries", "0", "--dns-backend-timeout-ms", "400",
       "--dns-backend-udp-timeout-ms", "100", "--dns-backend-down-after", "1", "--metrics-listen",
       "127.0.0.1:0"});
  ASSERT_TRUE(frontend.ok()) << frontend.status();

  // Pipelined on one connection: forwarded at once, spread over the three (least outstanding).
  constexpr int kQueries = 12;
  std::vector<std::vector<uint8_t>> queries;
  for (int i = 0; i < kQueries; ++i) {
    queries.push_back(MakeQuery(absl::StrCat("q", i, ".example"), "A", {.id = uint16_t(i)}));
  }
  auto answers = testing::ExchangeTcp((*frontend)->port(), queries, absl::Seconds(10));
  ASSERT_TRUE(answers.ok()) << answers.status();
  ASSERT_EQ(answers->size(), static_cast<size_t>(kQueries)) << "each query gets an answer";
  ASSERT_TRUE(onepass::testing::WaitFor(
      [&] { return testing::FrontendMetric(**frontend, Down(silent.port())) == 1; },
      absl::Seconds(5)))
      << "the silent backend's probe failed: down";

  const std::string metrics = onepass::testing::HttpGet((*frontend)->metrics_address(), "/metrics");
  const auto value = [&](const std::string& name) {
    const double v = onepass::testing::MetricValue(metrics, name);
    EXPECT_GE(v, 0) << name << " is missing from\n" << metrics;
    return v;
  };
  EXPECT_NE(metrics.find("# TYPE onepass_dns_frontend_backend_down gauge\n"), std::string::npos);
  // The labelled families are valid exposition (the body without curl's "\n200").
  ASSERT_GT(metrics.size(), 4u);
  auto check = onepass::testing::RunCommand({"promtool", "check", "metrics"}, absl::Seconds(20),
                                            metrics.substr(0, metrics.size() - 4));
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_EQ(check->exit_code, 0) << check->out << check->err;

  const int to_healthy = healthy.received;
  EXPECT_EQ(value(Queries(healthy.port(), "forwarded")), to_healthy);
  EXPECT_EQ(value(Queries(healthy.port(), "answered")), to_healthy);
  EXPECT_EQ(value(Queries(healthy.port(), "udp_timeout")), 0);
  EXPECT_EQ(value(Queries(healthy.port(), "truncated")), 0);
  EXPECT_EQ(value(Probes(healthy.port(), "sent")), 0);
  EXPECT_EQ(value(Down(healthy.port())), 0);

  EXPECT_GT(limiting.dropped, 0);
  EXPECT_GT(limiting.truncated, 0);
  EXPECT_EQ(value(Queries(limiting.port(), "forwarded")), limiting.queries);
  EXPECT_EQ(value(Queries(limiting.port(), "udp_timeout")), limiting.dropped);
  EXPECT_EQ(value(Queries(limiting.port(), "truncated")), limiting.truncated);
  EXPECT_EQ(value(Queries(limiting.port(), "answered")), 0) << "its TCP retries were refused";
  EXPECT_EQ(value(Queries(limiting.port(), "timeout_servfail")), limiting.queries);
  EXPECT_EQ(value(Probes(limiting.port(), "sent")), limiting.probes);
  EXPECT_EQ(value(Probes(limiting.port(), "failed")), 0);
  EXPECT_EQ(value(Down(limiting.port())), 0) << "rate limiting is not down: its probes answer";

  const double to_silent = value(Queries(silent.port(), "forwarded"));
  EXPECT_GT(to_silent, 0);
  EXPECT_EQ(to_healthy + limiting.queries + to_silent, kQueries);
  EXPECT_EQ(value(Queries(silent.port(), "udp_timeout")), to_silent);
  EXPECT_EQ(value(Queries(silent.port(), "timeout_servfail")), to_silent);
  EXPECT_GE(value(Probes(silent.port(), "failed")), 1);
  EXPECT_GE(value(Probes(silent.port(), "sent")), value(Probes(silent.port(), "failed")));

  // The handler's totals are the sums over backends.
  EXPECT_EQ(value("onepass_dns_frontend_queries_total{outcome=\"forwarded\"}"), kQueries);
  EXPECT_EQ(value("onepass_dns_frontend_tcp_retries_total{result=\"udp_timeout\"}"),
            limiting.dropped + to_silent);
  EXPECT_EQ(value("onepass_dns_frontend_tcp_retries_total{result=\"sent\"}"), limiting.truncated);
}

}  // namespace
}  // namespace onepass::dns
