// PROXY protocol v2 end to end: HAProxy (send-proxy-v2) in front of onepassd, real clients from
// several loopback addresses. The client address the header carries must be the one the
// per-client limit counts; a trusted peer without a header is refused.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/support/loopback_port.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass::testing {
namespace {

TEST(ProxyProtocolTest, BehindHaproxy) {
  for (const char* program : {"haproxy", "kdig", "curl"}) {
    if (!ProgramExists(program)) GTEST_SKIP() << program << " is not installed";
  }
  auto server =
      ServerProcess::Start({"--handler", "dns", "--listen", "127.0.0.1:0", "--workers", "1",
                            "--metrics-listen", "127.0.0.1:0", "--proxy-protocol-from",
                            "127.0.0.1/32", "--max-connections-per-client", "1"});
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string metrics = (*server)->metrics_address();

  char dir_template[] = "/tmp/onepass-haproxy-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const int front = FreeLoopbackPort();
  const std::string config = absl::StrCat(dir, "/haproxy.cfg");
  {
    FILE* file = fopen(config.c_str(), "w");
    ASSERT_NE(file, nullptr);
    fprintf(file,
            "global\n  maxconn 64\ndefaults\n  mode tcp\n  timeout connect 2s\n"
            "  timeout client 10s\n  timeout server 10s\n"
            "frontend f\n  bind 127.0.0.1:%d\n  default_backend b\n"
            "backend b\n  server onepass %s send-proxy-v2\n",
            front, (*server)->addresses()[0].c_str());
    fclose(file);
  }
  const pid_t haproxy = Spawn({"haproxy", "-db", "-f", config}, absl::StrCat(dir, "/haproxy.log"));
  ASSERT_GT(haproxy, 0);
  EXPECT_TRUE(WaitFor([&] { return IsListening(front); }, absl::Seconds(10)));

  // Through the balancer: answered.
  absl::StatusOr<CommandResult> via =
      RunCommand({"kdig", "+tcp", "+short", "+time=3", "+retry=0", "@127.0.0.1", "-p",
                  absl::StrCat(front), "www.example.com", "A"});
  ASSERT_TRUE(via.ok());
  EXPECT_NE(via->out.find("192.0.2.80"), std::string::npos) << via->out << via->err;
  EXPECT_TRUE(WaitFor([&] { return ScrapeValue(metrics, "onepass_proxy_headers_total") >= 1; },
                      absl::Seconds(5)));

  // Straight from the balancer's address without a header: refused and counted.
  absl::StatusOr<CommandResult> direct =
      RunCommand({"kdig", "+tcp", "+short", "+time=2", "+retry=0", "@127.0.0.1", "-p",
                  absl::StrCat((*server)->port()), "www.example.com", "A"});
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(direct->out.find("192.0.2.80"), std::string::npos) << direct->out;
  EXPECT_TRUE(WaitFor([&] { return ScrapeValue(metrics, "onepass_rejected_proxy_total") >= 1; },
                      absl::Seconds(5)));

  // Per-client limit 1 on the clients behind the balancer: 127.0.0.2 and 127.0.0.3 may each
  // hold one unfinished request; a second from 127.0.0.2 is refused. Had the limit seen the
  // balancer's address (all 127.0.0.1), two of the three would have been refused.
  std::vector<TcpClient> clients;
  for (const char* source : {"127.0.0.2", "127.0.0.3", "127.0.0.2"}) {
    absl::StatusOr<TcpClient> client =
        TcpClient::Connect("127.0.0.1", front, absl::Seconds(5), source);
    ASSERT_TRUE(client.ok()) << client.status();
    ASSERT_TRUE(client->Send(std::string("\x00", 1)).ok());  // half a length prefix
    clients.push_back(*std::move(client));
    // One at a time, so that which one is refused is certain.
    const double parked_before = clients.size() <= 2 ? clients.size() : 2;
    EXPECT_TRUE(WaitFor(
        [&] {
          return ScrapeValue(metrics, "onepass_parked_total") >= parked_before ||
                 ScrapeValue(metrics, "onepass_rejected_per_client_total") >= 1;
        },
        absl::Seconds(5)));
  }
  EXPECT_TRUE(
      WaitFor([&] { return ScrapeValue(metrics, "onepass_rejected_per_client_total") == 1; },
              absl::Seconds(5)));
  EXPECT_EQ(ScrapeValue(metrics, "onepass_parked_connections"), 2);
  clients.clear();

  KillAndReap(haproxy);
  EXPECT_TRUE(RunCommand({"rm", "-rf", dir}, absl::Seconds(10)).ok());
  EXPECT_EQ((*server)->Stop(), 0) << (*server)->ReadStderr();
}

}  // namespace
}  // namespace onepass::testing
