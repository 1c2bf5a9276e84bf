#include "tests/support/in_process_server.h"

#include <unistd.h>

#include <utility>

namespace onepass::testing {

InProcessLineServerTest::InProcessLineServerTest() {
  config_.listen = {"127.0.0.1:0"};
  config_.read_timeout = absl::Seconds(2);
  config_.write_timeout = absl::Seconds(2);
  config_.drain_timeout = absl::Seconds(2);
}

InProcessLineServerTest::~InProcessLineServerTest() {
  if (server_ != nullptr) {
    server_->RequestStop();
    server_->Wait();
  }
}

void InProcessLineServerTest::StartServer(const LineProtocolOptions& options) {
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::Create(config_, std::make_unique<LineHandlerFactory>(options), tls_);
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
  server_->Start();
  port_ = server_->addresses()[0].port();
}

absl::StatusOr<TcpClient> InProcessLineServerTest::Connect() const {
  return TcpClient::Connect("127.0.0.1", port_);
}

bool InProcessLineServerTest::WaitForStats(const std::function<bool(const StatsSnapshot&)>& done) {
  for (int i = 0; i < 500; ++i) {
    if (done(server_->Stats())) return true;
    usleep(10 * 1000);
  }
  ADD_FAILURE() << "stats never matched: " << server_->Stats().Format();
  return false;
}

}  // namespace onepass::testing
