// A gtest fixture that runs the Server in the test's own process with the test line protocol
// (tests/support/line_handler.h): the transport over real loopback TCP, its counters read
// directly. Tests set config_ before StartServer; the destructor stops and joins the workers.
#ifndef ONEPASS_TESTS_SUPPORT_IN_PROCESS_SERVER_H_
#define ONEPASS_TESTS_SUPPORT_IN_PROCESS_SERVER_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/core/stats.h"
#include "server/server.h"
#include "server/server_config.h"
#include "tests/support/line_handler.h"
#include "tests/support/tcp_client.h"

namespace onepass::testing {

class InProcessLineServerTest : public ::testing::Test {
 protected:
  // One loopback listener; timeouts generous (sanitizer builds on a loaded machine are slow;
  // tests of timeouts set their own).
  InProcessLineServerTest();
  ~InProcessLineServerTest() override;

  // Creates and starts the server with config_; a failure fails the test (ASSERT).
  void StartServer(const LineProtocolOptions& options = {});
  absl::StatusOr<TcpClient> Connect() const;
  // Counters are updated before a socket is closed but read from another thread: polls until
  // `done` holds, for at most 5 s; false (and a test failure with the counters) otherwise.
  bool WaitForStats(const std::function<bool(const StatsSnapshot&)>& done);

  ServerConfig config_;
  // The TLS context for config_.tls_listen (Server::Create's `tls`).
  std::shared_ptr<const tls::TlsServerContext> tls_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
};

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_IN_PROCESS_SERVER_H_
