#include "loadtest/report.h"

#include <string>

#include "gtest/gtest.h"
#include "loadtest/whois_request.h"

namespace onepass::load {
namespace {

ThreadStats Thread(int64_t cpu_ms, int64_t wall_ms) {
  ThreadStats stats;
  stats.cpu_ns = cpu_ms * 1'000'000;
  stats.wall_ns = wall_ms * 1'000'000;
  return stats;
}

TEST(ReportTest, SaturatedThreadMakesTheClientTheBottleneck) {
  RunResult result;
  result.threads = {Thread(400, 1000), Thread(950, 1000)};
  JudgeClientLimits(&result);
  EXPECT_TRUE(result.client_bound);
  ASSERT_EQ(result.client_notes.size(), 1u);
  EXPECT_EQ(result.client_notes[0], "client thread 1 used 95% of a CPU");
  result.threads = {Thread(400, 1000), Thread(850, 1000)};
  JudgeClientLimits(&result);
  EXPECT_FALSE(result.client_bound);
  EXPECT_DOUBLE_EQ(result.max_thread_cpu_ratio(), 0.85);
}

TEST(ReportTest, OpenLoopLagIsTheClientsUnlessTheSlotsRanOut) {
  RunResult result;
  result.requested_rate = 1000;
  result.threads = {Thread(100, 1000)};
  result.total.started = 100;
  for (int i = 0; i < 100; ++i) result.total.start_lag.Record(5'000'000);  // all 5 ms late
  JudgeClientLimits(&result);
  EXPECT_TRUE(result.client_bound);
  EXPECT_NE(result.client_notes[0].find("fell behind"), std::string::npos);
  EXPECT_NE(result.client_notes[0].find("mostly idle"), std::string::npos);
  // The same lag with every slot busy: the server is the one behind.
  result.total.inflight_cap_waits = 3;
  JudgeClientLimits(&result);
  EXPECT_FALSE(result.client_bound);
  EXPECT_NE(result.client_notes[0].find("--max-inflight"), std::string::npos);
}

TEST(ReportTest, RunningOutOfPortsIsReportedWithAdvice) {
  RunResult result;
  result.total.errors[static_cast<int>(ErrorKind::kNoSourcePort)] = 7;
  JudgeClientLimits(&result);
  EXPECT_TRUE(result.client_bound);
  EXPECT_NE(result.client_notes[0].find("--source"), std::string::npos);
  EXPECT_NE(result.client_notes[0].find("ip_local_port_range"), std::string::npos);
}

TEST(ReportTest, JsonCarriesTheFiguresAndEscapesServerText) {
  EXPECT_EQ(JsonEscape("a\"b\\c\n\x01\xff"), "a\\\"b\\\\c\\u000a\\u0001\\u00ff");
  WhoisClient whois("example.com", "");
  LoadConfig config;
  config.protocol = &whois;
  RunResult result;
  result.wall_s = 2;
  result.total.started = 10;
  result.total.ok = 8;
  result.total.errors[static_cast<int>(ErrorKind::kWrong)] = 2;
  result.total.samples = {"bad \"reply\""};
  for (int i = 1; i <= 8; ++i) result.total.latency.Record(i * 1000);
  std::string json = RunJson(config, "{}", result);
  EXPECT_NE(json.find("\"achieved_conn_per_s\": 5.0"), std::string::npos) << json;
  EXPECT_NE(json.find("\"ok_per_s\": 4.0"), std::string::npos);
  EXPECT_NE(json.find("\"success_ratio\": 0.800000"), std::string::npos);
  EXPECT_NE(json.find("\"wrong\": 2"), std::string::npos);
  EXPECT_NE(json.find("\"p50\": 4.0"), std::string::npos);
  EXPECT_NE(json.find("\"max\": 8.0"), std::string::npos);
  EXPECT_NE(json.find("\"bad \\\"reply\\\"\""), std::string::npos);
}

}  // namespace
}  // namespace onepass::load
