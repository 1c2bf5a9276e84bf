// The Prometheus exposition (server/ops/metrics_format.h), the health verdicts
// (server/ops/health.h) and the ops listener's request-head parser (server/ops/metrics_server.h).
#include "server/ops/metrics_format.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "server/ops/health.h"
#include "server/ops/metrics_server.h"

namespace onepass {
namespace {

constexpr CounterSpec kSpecs[] = {
    {"test_answers", "kind", "yes", "answered yes"},
    {"test_answers", "kind", "no", "answered no"},
    {"test_loops", "", "", "loops"},
};

MetricsInput TwoWorkers() {
  MetricsInput input;
  input.version = "v1";
  input.handler = "test";
  input.handler_specs = kSpecs;
  for (int w = 0; w < 2; ++w) {
    WorkerSample sample;
    sample.index = w;
    sample.cpu = w + 4;
    sample.stats.accepted = 10 + w;
    sample.stats.rejected_per_client = 2;
    sample.handler_counts = {uint64_t(3 + w), 1, 0};
    sample.metrics.accept_to_close.buckets[0] = 5;
    sample.metrics.accept_to_close.buckets[3] = 1;
    sample.metrics.accept_to_close.buckets.back() = 1;
    sample.metrics.accept_to_close.sum_nanos = 1'500'000'000;
    sample.metrics.parked_now = 7;
    sample.metrics.accept_pauses[0] = 1;
    input.workers.push_back(sample);
  }
  input.reloads = 3;
  input.status.phase = ServerPhase::kServing;
  input.status.data = {{"test_objects", "objects loaded", {{"zone", "a\"b"}}, 42}};
  return input;
}

bool Has(const std::string& text, const std::string& line) {
  return absl::StrContains(text, line + "\n");
}

TEST(MetricsFormatTest, SumsWorkersAndLabelsEach) {
  const std::string text = FormatMetrics(TwoWorkers());
  EXPECT_TRUE(Has(text, "# TYPE onepass_accepted_total counter")) << text;
  EXPECT_TRUE(Has(text, "onepass_accepted_total 21"));
  EXPECT_TRUE(Has(text, "onepass_worker_accepted_total{worker=\"0\",cpu=\"4\"} 10"));
  EXPECT_TRUE(Has(text, "onepass_worker_accepted_total{worker=\"1\",cpu=\"5\"} 11"));
  EXPECT_TRUE(Has(text, "onepass_rejected_per_client_total 4"));
  // Totals are computed by queries, not exported a second time.
  EXPECT_FALSE(absl::StrContains(text, "onepass_rejected_total"));
  // Server-wide counters have no per-worker series.
  EXPECT_TRUE(Has(text, "onepass_reloads_total 3"));
  EXPECT_FALSE(absl::StrContains(text, "onepass_worker_reloads_total"));
}

TEST(MetricsFormatTest, HandlerCountersOneFamilyEach) {
  const std::string text = FormatMetrics(TwoWorkers());
  EXPECT_TRUE(Has(text, "onepass_test_answers_total{kind=\"yes\"} 7")) << text;
  EXPECT_TRUE(Has(text, "onepass_test_answers_total{kind=\"no\"} 2"));
  EXPECT_TRUE(
      Has(text, "onepass_worker_test_answers_total{worker=\"1\",cpu=\"5\",kind=\"yes\"} 4"));
  EXPECT_TRUE(Has(text, "onepass_test_loops_total 0"));
  size_t types = 0;
  for (size_t at = 0;
       (at = text.find("# TYPE onepass_test_answers_total ", at)) != std::string::npos; ++at) {
    ++types;
  }
  EXPECT_EQ(types, 1u);
}

TEST(MetricsFormatTest, HistogramIsCumulativeWithInf) {
  const std::string text = FormatMetrics(TwoWorkers());
  EXPECT_TRUE(Has(text, "# TYPE onepass_connection_duration_seconds histogram"));
  EXPECT_TRUE(Has(text, "onepass_connection_duration_seconds_bucket{le=\"5e-05\"} 10")) << text;
  EXPECT_TRUE(Has(text, "onepass_connection_duration_seconds_bucket{le=\"0.0005\"} 12"));
  EXPECT_TRUE(Has(text, "onepass_connection_duration_seconds_bucket{le=\"10\"} 12"));
  EXPECT_TRUE(Has(text, "onepass_connection_duration_seconds_bucket{le=\"+Inf\"} 14"));
  EXPECT_TRUE(Has(text, "onepass_connection_duration_seconds_count 14"));
  EXPECT_TRUE(Has(text, "onepass_connection_duration_seconds_sum 3"));
}

TEST(MetricsFormatTest, GaugesStatusAndData) {
  const std::string text = FormatMetrics(TwoWorkers());
  EXPECT_TRUE(Has(text, "onepass_parked_connections 14"));
  EXPECT_TRUE(Has(text, "onepass_accept_pauses_by_errno_total{errno=\"EMFILE\"} 2"));
  EXPECT_TRUE(Has(text, "onepass_phase{phase=\"serving\"} 1"));
  EXPECT_TRUE(Has(text, "onepass_phase{phase=\"starting\"} 0"));
  EXPECT_TRUE(Has(text, "onepass_build_info{version=\"v1\",handler=\"test\"} 1"));
  EXPECT_TRUE(Has(text, "onepass_test_objects{zone=\"a\\\"b\"} 42")) << text;
  EXPECT_TRUE(absl::EndsWith(text, "\n"));
}

TEST(MetricsFormatTest, EscapesLabelValues) {
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

TEST(HealthTest, VerdictsSayWhy) {
  ServerStatusSnapshot status;
  const int64_t now = 100'000'000'000;
  const std::vector<int64_t> fresh = {now - 1'000'000, now - 2'000'000};
  const absl::Duration bound = absl::Seconds(5);
  EXPECT_FALSE(CheckHealth(status, fresh, now, bound).ok);
  EXPECT_EQ(CheckReady(status, fresh, now, bound).reason,
            "starting: loading data and binding listeners");
  status.phase = ServerPhase::kServing;
  status.data_loaded = true;
  EXPECT_TRUE(CheckHealth(status, fresh, now, bound).ok);
  EXPECT_EQ(CheckReady(status, fresh, now, bound).reason, "serving");
  const std::vector<int64_t> stuck = {now - 1'000'000, now - 6'000'000'000};
  const HealthVerdict verdict = CheckHealth(status, stuck, now, bound);
  EXPECT_FALSE(verdict.ok);
  EXPECT_TRUE(absl::StartsWith(verdict.reason, "worker 1 is stuck")) << verdict.reason;
  status.phase = ServerPhase::kDraining;
  EXPECT_FALSE(CheckHealth(status, fresh, now, bound).ok);
  EXPECT_TRUE(absl::StartsWith(CheckReady(status, fresh, now, bound).reason, "draining"));
}

struct Head {
  bool complete = false;
  bool valid = false;
  std::string method;
  std::string path;
  bool operator==(const Head&) const = default;
};

Head Parse(const std::string& text) {
  Head head;
  head.complete = ParseHttpRequestHead(text, head.valid, head.method, head.path);
  if (!head.complete) head = Head{};
  return head;
}

TEST(HttpRequestHeadTest, Table) {
  EXPECT_EQ(Parse("GET /metrics?a=b HTTP/1.1\r\nHost: x\r\n\r\n"),
            (Head{true, true, "GET", "/metrics"}));
  EXPECT_EQ(Parse("HEAD /healthz HTTP/1.0\n\n"), (Head{true, true, "HEAD", "/healthz"}));
  EXPECT_FALSE(Parse("GET /metrics HTTP/1.1\r\n").complete);
  EXPECT_EQ(Parse("GARBAGE\r\n\r\n").valid, false);
  EXPECT_EQ(Parse("GET / HTTP/2.0\r\n\r\n").valid, false);
}

// Split invariance: fed in two pieces, a head is incomplete until its end arrives, and then
// parses as it does whole.
TEST(HttpRequestHeadTest, EverySplitAgrees) {
  const std::string text = "GET /readyz HTTP/1.1\r\nUser-Agent: probe\r\n\r\n";
  const Head whole = Parse(text);
  for (size_t split = 0; split < text.size(); ++split) {
    EXPECT_FALSE(Parse(text.substr(0, split)).complete) << split;
    EXPECT_EQ(Parse(text.substr(0, split) + text.substr(split)), whole) << split;
  }
}

TEST(MetricsFormatTest, ScopedHandlerCountersAndGauges) {
  constexpr CounterSpec kScoped[] = {
      {"test_sent", "outcome", "ok", "sent ok", "peer", "a:1"},
      {"test_sent", "outcome", "lost", "sent lost", "peer", "a:1"},
      {"test_sent", "outcome", "ok", "sent ok", "peer", "b:2"},
      {"test_sent", "outcome", "lost", "sent lost", "peer", "b:2"},
      {"test_peer_down", "", "", "workers holding the peer down", "peer", "a:1", true},
      {"test_peer_down", "", "", "workers holding the peer down", "peer", "b:2", true},
  };
  MetricsInput input = TwoWorkers();
  input.handler_specs = kScoped;
  input.workers[0].handler_counts = {5, 1, 7, 0, 1, 0};
  input.workers[1].handler_counts = {2, 2, 3, 0, 1, 0};
  const std::string text = FormatMetrics(input);
  EXPECT_TRUE(Has(text, "onepass_test_sent_total{peer=\"a:1\",outcome=\"ok\"} 7")) << text;
  EXPECT_TRUE(Has(text, "onepass_test_sent_total{peer=\"a:1\",outcome=\"lost\"} 3"));
  EXPECT_TRUE(Has(text, "onepass_test_sent_total{peer=\"b:2\",outcome=\"ok\"} 10"));
  EXPECT_TRUE(Has(text, "# HELP onepass_test_sent_total test test_sent by peer and outcome"));
  EXPECT_TRUE(Has(text,
                  "onepass_worker_test_sent_total{worker=\"1\",cpu=\"5\",peer=\"b:2\","
                  "outcome=\"ok\"} 3"));
  // A gauge: its type, no _total, summed over workers (both hold a:1 down).
  EXPECT_TRUE(Has(text, "# TYPE onepass_test_peer_down gauge"));
  EXPECT_TRUE(Has(text, "# HELP onepass_test_peer_down workers holding the peer down"));
  EXPECT_TRUE(Has(text, "onepass_test_peer_down{peer=\"a:1\"} 2"));
  EXPECT_TRUE(Has(text, "onepass_test_peer_down{peer=\"b:2\"} 0"));
  EXPECT_TRUE(Has(text, "onepass_worker_test_peer_down{worker=\"0\",cpu=\"4\",peer=\"a:1\"} 1"));
  EXPECT_FALSE(absl::StrContains(text, "onepass_test_peer_down_total"));
  EXPECT_EQ(CounterName(kScoped[1]), "test_sent{peer=\"a:1\",outcome=\"lost\"}");
  EXPECT_EQ(CounterName(kScoped[4]), "test_peer_down{peer=\"a:1\"}");
}

// A vacant slot (scope label, no value: the DNS frontend's --dns-backends-file slots with no
// backend now) is left out of /metrics and of the stats line, whatever its count; a family
// whose every member is vacant is left out whole.
TEST(MetricsFormatTest, VacantSlotsAreNotExported) {
  constexpr CounterSpec kSlots[] = {
      {"test_sent", "outcome", "ok", "sent ok", "peer", ""},
      {"test_sent", "outcome", "ok", "sent ok", "peer", "b:2"},
      {"test_gone", "", "", "only vacant", "peer", ""},
  };
  MetricsInput input = TwoWorkers();
  input.handler_specs = kSlots;
  input.workers[0].handler_counts = {5, 1, 9};
  input.workers[1].handler_counts = {2, 2, 9};
  const std::string text = FormatMetrics(input);
  EXPECT_TRUE(Has(text, "onepass_test_sent_total{peer=\"b:2\",outcome=\"ok\"} 3")) << text;
  EXPECT_FALSE(absl::StrContains(text, "peer=\"\"")) << text;
  EXPECT_FALSE(absl::StrContains(text, "test_gone")) << text;
  EXPECT_FALSE(Exported(kSlots[0]));
  EXPECT_TRUE(Exported(kSlots[1]));
  EXPECT_EQ(FormatCounters(kSlots, std::vector<uint64_t>{7, 3, 18}),
            "test_sent{peer=\"b:2\",outcome=\"ok\"}=3");
}

}  // namespace
}  // namespace onepass
