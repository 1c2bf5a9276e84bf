// --xdp with a forwarding handler (the DNS frontend, --dns-backend) is refused at start-up:
// the XDP program takes every TCP segment of the --listen ports, so the kernel's listeners,
// which reach the upstreams, would never see those clients, and the AF_XDP path has no
// upstream (server/xdp/serve/handler_adapter.h). Needs no privileges: nothing is attached.
#include <memory>
#include <optional>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "handlers/forwarding.h"
#include "handlers/handler.h"
#include "server/server.h"

namespace onepass {
namespace {

class FakeFactory : public HandlerFactory {
 public:
  explicit FakeFactory(bool forwards) : forwards_(forwards) {}
  absl::string_view Name() const override { return "fake"; }
  std::unique_ptr<Handler> CreateHandler(HandlerCounters&) const override { return nullptr; }
  size_t MaxRequestBytes() const override { return 512; }
  size_t OutputBufferBytes() const override { return 512; }
  std::optional<ForwardingSpec> Forwarding() const override {
    if (!forwards_) return std::nullopt;
    return ForwardingSpec{};
  }

 private:
  bool forwards_;
};

ServerConfig XdpConfig() {
  ServerConfig config;
  config.listen = {"127.0.0.1:0"};
  config.workers = 1;
  config.xdp = {"nosuch0"};
  return config;
}

TEST(XdpHandlerCheckTest, ForwardingHandlerWithXdpIsRefusedSayingWhatToDo) {
  const absl::Status status = Server::CheckXdpHandler(XdpConfig(), FakeFactory(true));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--dns-backend")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "drop --xdp")) << status;
}

TEST(XdpHandlerCheckTest, CreateRefusesBeforeBindingAnything) {
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(XdpConfig(), std::make_unique<FakeFactory>(true));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument) << server.status();
  EXPECT_TRUE(absl::StrContains(server.status().message(), "--xdp")) << server.status();
}

TEST(XdpHandlerCheckTest, AnsweringHandlerWithXdpAndForwardingWithoutXdpAreFine) {
  EXPECT_TRUE(Server::CheckXdpHandler(XdpConfig(), FakeFactory(false)).ok());
  ServerConfig without = XdpConfig();
  without.xdp.clear();
  EXPECT_TRUE(Server::CheckXdpHandler(without, FakeFactory(true)).ok());
}

}  // namespace
}  // namespace onepass
