// /healthz, /readyz and /metrics in-process (server/ops/ops_endpoints.h): a worker stuck inside its
// handler is reported within the stall bound and recovers when released; the ops listener
// answers over real HTTP on its own thread while the worker is stuck.
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "handlers/handler.h"
#include "server/ops/metrics_server.h"
#include "server/ops/ops_endpoints.h"
#include "server/ops/server_status.h"
#include "server/server.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

using testing::TcpClient;
using testing::WaitFor;

// Answers "ok\n" to anything; on "block" it spins until released (a handler stuck in a loop,
// as a bug would leave it), which stops its worker's loop and so its heartbeat.
std::atomic<bool> g_release{false};

class BlockingHandler : public Handler {
 public:
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override {
    const std::string text(input.begin(), input.end());
    if (text.find('\n') == std::string::npos) return {Action::kReadMore, 0};
    if (absl::StartsWith(text, "block")) {
      while (!g_release.load()) usleep(1000);
    }
    static constexpr uint8_t kOk[] = {'o', 'k', '\n'};
    if (!out.Append(kOk)) return {Action::kClose, input.size()};
    return {Action::kWriteThenClose, input.size()};
  }
};

class BlockingFactory : public HandlerFactory {
 public:
  absl::string_view Name() const override { return "blocking"; }
  std::unique_ptr<Handler> CreateHandler(HandlerCounters&) const override {
    return std::make_unique<BlockingHandler>();
  }
  size_t MaxRequestBytes() const override { return 1024; }
  size_t OutputBufferBytes() const override { return 1024; }
};

std::string Get(int port, const std::string& path) {
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port);
  if (!client.ok()) return "connect failed";
  if (!client->Send(absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: x\r\n\r\n")).ok()) {
    return "send failed";
  }
  absl::StatusOr<std::string> reply = client->ReadUntilClose();
  return reply.ok() ? *reply : reply.status().ToString();
}

TEST(HealthTest, StuckWorkerThenRecovered) {
  ServerConfig config;
  config.listen = {"127.0.0.1:0"};
  config.workers = 2;
  config.cpus = {};
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(config, std::make_unique<BlockingFactory>());
  ASSERT_TRUE(server.ok()) << server.status();
  ServerStatus status;
  OpsEndpoints ops(
      &status, {.version = "test", .handler = "blocking", .stall_bound = absl::Milliseconds(800)});
  absl::StatusOr<std::unique_ptr<MetricsServer>> metrics =
      MetricsServer::Create((*ParseSocketAddress("127.0.0.1:0")),
                            [&ops](absl::string_view method, absl::string_view path) {
                              return ops.Handle(method, path);
                            });
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  (*metrics)->Start();
  const int ops_port = (*metrics)->address().port();

  EXPECT_TRUE(absl::StartsWith(Get(ops_port, "/readyz"), "HTTP/1.1 503"));
  EXPECT_TRUE(absl::StrContains(Get(ops_port, "/readyz"), "starting"));
  ops.SetServer(server->get());
  (*server)->Start();
  status.SetData({}, absl::Now(), absl::ZeroDuration());
  status.SetPhase(ServerPhase::kServing);
  EXPECT_TRUE(WaitFor([&] { return absl::StartsWith(Get(ops_port, "/healthz"), "HTTP/1.1 200"); },
                      absl::Seconds(5)));
  EXPECT_TRUE(absl::StrContains(Get(ops_port, "/readyz"), "serving"));

  // Stick every worker (connections are spread by hash: send until both are stuck).
  g_release = false;
  std::vector<TcpClient> stuck;
  const int port = (*server)->addresses()[0].port();
  for (int i = 0; i < 8; ++i) {
    absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", port);
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE(client->Send("block\n").ok());
    stuck.push_back(*std::move(client));
  }
  std::string reply;
  EXPECT_TRUE(WaitFor(
      [&] {
        reply = Get(ops_port, "/healthz");
        return absl::StartsWith(reply, "HTTP/1.1 503") && absl::StrContains(reply, "is stuck");
      },
      absl::Seconds(10)))
      << reply;
  // /metrics still answers: it never waits for a worker.
  const std::string exposition = Get(ops_port, "/metrics");
  EXPECT_TRUE(absl::StartsWith(exposition, "HTTP/1.1 200")) << exposition;
  EXPECT_TRUE(absl::StrContains(exposition, "onepass_worker_heartbeat_age_seconds{worker=\"0\""));

  g_release = true;
  EXPECT_TRUE(WaitFor([&] { return absl::StartsWith(Get(ops_port, "/healthz"), "HTTP/1.1 200"); },
                      absl::Seconds(10)));
  stuck.clear();

  status.SetPhase(ServerPhase::kDraining);
  reply = Get(ops_port, "/healthz");
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 503")) << reply;
  EXPECT_TRUE(absl::StrContains(reply, "draining")) << reply;
  EXPECT_TRUE(absl::StartsWith(Get(ops_port, "/nowhere"), "HTTP/1.1 404"));
  // Not HTTP at all: 400, and the listener goes on.
  absl::StatusOr<TcpClient> junk = TcpClient::Connect("127.0.0.1", ops_port);
  ASSERT_TRUE(junk.ok());
  ASSERT_TRUE(junk->Send("\x16\x03\x01 hello\r\n\r\n").ok());
  absl::StatusOr<std::string> junk_reply = junk->ReadUntilClose();
  ASSERT_TRUE(junk_reply.ok());
  EXPECT_TRUE(absl::StartsWith(*junk_reply, "HTTP/1.1 400")) << *junk_reply;

  (*metrics)->Stop();
  ops.SetServer(nullptr);
  (*server)->RequestStop();
  (*server)->Wait();
}

}  // namespace
}  // namespace onepass
