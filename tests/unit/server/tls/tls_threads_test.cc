// One TlsServerContext shared by several worker threads, each with its own sessions and
// counters: what the server will do. Under TSan (label tsan) this checks that nothing in the
// layer writes shared state after Create (the ticket callback reads the keys, never writes).
#include <openssl/ssl.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_session.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::tls {
namespace {

// For each engine: OpenSSL's, and ours (server/tls/onepass/: its engine, policy, ticket keyring
// and key shared by the workers, each session's contexts its own).
class TlsThreadsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TlsThreadsTest, WorkersShareOneContextAndResumeEachOthersTickets) {
  testing::TestPkiDir pki;
  TlsConfig config;
  config.engine = GetParam();
  config.cert_file = pki.chain_file();
  config.key_file = pki.key_file();
  auto context = TlsServerContext::Create(config, absl::Now());
  ASSERT_TRUE(context.ok()) << context.status();
  // A ticket issued on this thread, offered to every worker.
  SSL_SESSION* ticket = nullptr;
  {
    TlsSession session;
    TlsStats stats;
    ASSERT_TRUE(session.Start(*context, &stats));
    testing::TestTlsClient client;
    testing::Pump(client, session);
    client.Read();
    ticket = client.TakeSession();
  }
  constexpr int kWorkers = 3, kConnections = 20;
  std::vector<TlsStats> stats(kWorkers);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      TlsSession session;  // the worker's slot, reused
      for (int i = 0; i < kConnections; ++i) {
        if (!session.Start(*context, &stats[w])) return;
        testing::ClientOptions options;
        options.session = i % 2 == 0 ? ticket : nullptr;
        testing::TestTlsClient client(options);
        testing::Pump(client, session);
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (const TlsStats& s : stats) {
    EXPECT_EQ(s.handshakes_resumed, kConnections / 2u);
    EXPECT_EQ(s.handshakes_full, kConnections / 2u);
    EXPECT_EQ(s.failed_total(), 0u);
  }
  SSL_SESSION_free(ticket);
}

INSTANTIATE_TEST_SUITE_P(Engines, TlsThreadsTest, ::testing::Values("openssl", "onepass"));

}  // namespace
}  // namespace onepass::tls
