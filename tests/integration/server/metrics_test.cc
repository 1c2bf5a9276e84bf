// The operations listener end to end: onepassd --metrics-listen under a known load, checked by
// curl, by `promtool check metrics`, against the load tester's count, and scraped by a real
// Prometheus server started on loopback.
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/loopback_port.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/skip.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass::testing {
namespace {

TEST(MetricsTest, CountersMatchTheLoadAndPromtoolAccepts) {
  if (!ProgramExists("curl") || !ProgramExists("promtool")) {
    GTEST_SKIP() << "needs curl and promtool (Debian: curl, prometheus)";
  }
  auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers",
                                      "2", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string metrics = (*server)->metrics_address();
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(HttpGet(metrics, "/healthz"), "ok\n\n200");
  EXPECT_EQ(HttpGet(metrics, "/readyz"), "serving\n\n200");
  EXPECT_TRUE(absl::EndsWith(HttpGet(metrics, "/nothing"), "404"));

  constexpr int kCount = 300;
  absl::StatusOr<CommandResult> load =
      RunCommand({ONEPASS_LOAD_PATH, "--target", (*server)->addresses()[0], "--proto", "dns",
                  "--qname", "www.example.com.", "--qtype", "A", "--count", absl::StrCat(kCount),
                  "--concurrency", "8", "--timeout-ms", "5000"},
                 absl::Seconds(60));
  ASSERT_TRUE(load.ok()) << load.status();
  ASSERT_NE(load->out.find(absl::StrCat(kCount, " started, ", kCount, " ok, 0 errors")),
            std::string::npos)
      << load->out;

  // A kept-open connection (--keepalive-ms, on for DNS) is counted when the client's close
  // reaches the server, a moment after the load tester has its answer.
  std::string text;
  std::string body;
  testing::WaitFor(
      [&] {
        text = HttpGet(metrics, "/metrics");
        body = text.substr(0, text.size() >= 4 ? text.size() - 4 : 0);
        return MetricValue(body, "onepass_connection_duration_seconds_count") >= kCount;
      },
      absl::Seconds(10), absl::Milliseconds(20));
  ASSERT_TRUE(absl::EndsWith(text, "\n200")) << text;
  EXPECT_EQ(MetricValue(body, "onepass_accepted_total"), kCount) << body;
  EXPECT_EQ(MetricValue(body, "onepass_served_total"), kCount);
  EXPECT_EQ(MetricValue(body, "onepass_worker_accepted_total{worker=\"0\",cpu=\"0\"}") +
                MetricValue(body, "onepass_worker_accepted_total{worker=\"1\",cpu=\"1\"}"),
            kCount)
      << body;
  EXPECT_EQ(MetricValue(body, "onepass_connection_duration_seconds_count"), kCount);
  EXPECT_EQ(MetricValue(body, "onepass_workers"), 2);
  EXPECT_EQ(MetricValue(body, "onepass_phase{phase=\"serving\"}"), 1);
  EXPECT_GT(MetricValue(body, "onepass_dns_zone_serial{zone=\"example.com.\"}"), 0);

  absl::StatusOr<CommandResult> check =
      RunCommand({"promtool", "check", "metrics"}, absl::Seconds(20), body);
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->exit_code, 0) << check->out << check->err;

  // SIGHUP: the reload's result and time are exported.
  EXPECT_EQ(MetricValue(body, "onepass_last_reload_timestamp_seconds"), 0);
  ASSERT_EQ(kill((*server)->pid(), SIGHUP), 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        return ScrapeValue(metrics, "onepass_reloads_total") == 1 &&
               ScrapeValue(metrics, "onepass_last_reload_success") == 1 &&
               ScrapeValue(metrics, "onepass_last_reload_timestamp_seconds") > 1e9;
      },
      absl::Seconds(10)));
  EXPECT_EQ((*server)->Stop(), 0);
}

// SIGTERM: while connections drain, /healthz and /readyz say so (a load balancer stops sending).
TEST(MetricsTest, DrainingIsUnhealthy) {
  if (!ProgramExists("curl")) GTEST_SKIP() << "needs curl";
  auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers",
                                      "1", "--metrics-listen", "127.0.0.1:0", "--drain-timeout-ms",
                                      "4000", "--read-timeout-ms", "4000"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string metrics = (*server)->metrics_address();
  // Half a DNS length prefix: the connection parks and holds the drain open.
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", (*server)->port());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send(std::string("\x00", 1)).ok());
  ASSERT_TRUE(WaitFor([&] { return ScrapeValue(metrics, "onepass_parked_connections") == 1; },
                      absl::Seconds(5)));
  ASSERT_EQ(kill((*server)->pid(), SIGTERM), 0);
  std::string health;
  EXPECT_TRUE(WaitFor(
      [&] {
        health = HttpGet(metrics, "/healthz");
        return absl::StartsWith(health, "draining") && absl::EndsWith(health, "503");
      },
      absl::Seconds(3)))
      << health;
  EXPECT_TRUE(absl::EndsWith(HttpGet(metrics, "/readyz"), "503"));
  EXPECT_EQ(ScrapeValue(metrics, "onepass_phase{phase=\"draining\"}"), 1);
}

// deploy/onepassd.flags, with loopback ports instead of 53 and 9153, is a configuration
// onepassd accepts: every flag in it exists and every value is valid.
TEST(MetricsTest, DeployFlagfileExampleIsAccepted) {
  std::ifstream example(ONEPASS_SOURCE_DIR "/deploy/onepassd.flags");
  ASSERT_TRUE(example) << "deploy/onepassd.flags is missing";
  std::stringstream text;
  text << example.rdbuf();
  std::string flags = text.str();
  flags = absl::StrReplaceAll(
      flags, {{"--listen=0.0.0.0:53", "--listen=127.0.0.1:0"},
              {"--listen=[::]:53", ""},
              {"--metrics-listen=127.0.0.1:9153", "--metrics-listen=127.0.0.1:0"}});
  char path[] = "/tmp/onepass-flags-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, flags.data(), flags.size()), static_cast<ssize_t>(flags.size()));
  close(fd);
  auto server = ServerProcess::Start({"--flagfile", path, "--workers", "1"});
  unlink(path);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_FALSE((*server)->metrics_address().empty());
  EXPECT_TRUE(absl::StrContains((*server)->ReadStderr(), "--read-timeout-ms 2000"));
  EXPECT_EQ((*server)->Stop(), 0);
}

TEST(MetricsTest, PrometheusScrapesIt) {
  if (!ProgramExists("curl") || !ProgramExists("prometheus")) {
    GTEST_SKIP() << "needs curl and prometheus (Debian: prometheus)";
  }
  auto server = ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers",
                                      "1", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(server.ok()) << server.status();
  char dir_template[] = "/tmp/onepass-prometheus-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string config = absl::StrCat(dir, "/prometheus.yml");
  {
    FILE* file = fopen(config.c_str(), "w");
    ASSERT_NE(file, nullptr);
    fprintf(file,
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"
            "  - job_name: onepass\n    static_configs:\n      - targets: ['%s']\n",
            (*server)->metrics_address().c_str());
    fclose(file);
  }
  const std::string web = absl::StrCat("127.0.0.1:", FreeLoopbackPort());
  std::vector<std::string> args = {"prometheus", absl::StrCat("--config.file=", config),
                                   absl::StrCat("--storage.tsdb.path=", dir, "/data"),
                                   absl::StrCat("--web.listen-address=", web), "--log.level=warn"};
  const pid_t pid = Spawn(args, absl::StrCat(dir, "/prometheus.log"));
  ASSERT_GT(pid, 0);

  // Bounded: Prometheus starts, scrapes every second; 25 s at most.
  std::string answer;
  const absl::Time deadline = absl::Now() + absl::Seconds(25);
  bool found = false;
  while (!found && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(500));
    answer = HttpGet(web, "/api/v1/query?query=onepass_build_info");
    found = absl::StrContains(answer, "\"__name__\":\"onepass_build_info\"") &&
            absl::StrContains(answer, "\"handler\":\"dns\"");
  }
  KillAndReap(pid);
  EXPECT_TRUE(RunCommand({"rm", "-rf", dir}, absl::Seconds(10)).ok());
  EXPECT_TRUE(found) << answer;
  EXPECT_EQ((*server)->Stop(), 0);
}

}  // namespace
}  // namespace onepass::testing
