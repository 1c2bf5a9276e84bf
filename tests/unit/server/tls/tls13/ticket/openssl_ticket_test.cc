// A ticket our OpenSSL engine (server/tls/openssl/) issued under the same --tls-ticket-keys file
// must not open in the TLS 1.3 engine: same key names, another construction. Made for real: a
// TlsServerContext with the file, a TlsSession and OpenSSL's client over memory, the ticket
// taken from the client's session.
#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/tls/tls13/ticket/session_ticket.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_session.h"
#include "tests/unit/server/tls/tls13/ticket/test_keys.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::tls::tls13 {
namespace {

using tls::testing::ClientOptions;
using tls::testing::Pump;
using tls::testing::TestPkiDir;
using tls::testing::TestTlsClient;

// The ticket of one full handshake against the OpenSSL engine with `key_file` as its
// --tls-ticket-keys.
std::vector<uint8_t> OpenSslTicket(const TestPkiDir& pki, const std::string& key_file,
                                   const std::string& suites) {
  TlsConfig config;
  config.engine = "openssl";  // its tickets are the point, whatever the default engine
  config.cert_file = pki.chain_file();
  config.key_file = pki.key_file();
  config.ticket_keys_file = key_file;
  auto context = TlsServerContext::Create(config, absl::Now());
  EXPECT_TRUE(context.ok()) << context.status();
  if (!context.ok()) return {};
  TlsStats stats;
  TlsSession session;
  EXPECT_TRUE(session.Start(*context, &stats));
  ClientOptions options;
  options.ciphersuites = suites;
  TestTlsClient client(options);
  Pump(client, session);  // the handshake, then the NewSessionTicket the server sends after it
  EXPECT_TRUE(session.handshake_done());
  client.Read();  // the client reads the ticket
  SSL_SESSION* ssl_session = client.TakeSession();
  EXPECT_NE(ssl_session, nullptr);
  if (ssl_session == nullptr) return {};
  const unsigned char* ticket = nullptr;
  size_t length = 0;
  SSL_SESSION_get0_ticket(ssl_session, &ticket, &length);
  std::vector<uint8_t> bytes(ticket, ticket + length);
  SSL_SESSION_free(ssl_session);
  return bytes;
}

TEST(OpenSslTicketTest, TicketOfTheOpenSslEngineUnderTheSameFileDoesNotOpen) {
  TestPkiDir pki;
  const TicketKey key = tls13::testing::MakeKey(0x31);
  const std::string file = pki.WriteFile("ticket.keys", tls13::testing::KeyFileBytes(0x31));
  auto ring = TicketKeyring::Create(absl::MakeConstSpan(&key, 1));
  ASSERT_NE(ring, nullptr);
  TicketSealer sealer(*ring);
  TicketState opened;
  for (const char* suites :
       {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"}) {
    const std::vector<uint8_t> ticket = OpenSslTicket(pki, file, suites);
    ASSERT_GT(ticket.size(), 16u) << suites;
    EXPECT_NE(ticket.size(), kTicketLength) << suites;  // RFC 5077 §4's layout, not ours
    // It is under our key: RFC 5077 §4's key_name is the file's name, as ours is.
    ASSERT_TRUE(std::equal(key.name.begin(), key.name.end(), ticket.begin())) << suites;
    EXPECT_FALSE(sealer.Open(ticket, tls13::testing::kNowMs, &opened)) << suites;
    EXPECT_FALSE(
        sealer.Open(ticket, static_cast<uint64_t>(absl::ToUnixMillis(absl::Now())), &opened));
    // Cut or padded to our length, it reaches the tag check, and fails it.
    std::vector<uint8_t> fitted = ticket;
    fitted.resize(kTicketLength, 0);
    EXPECT_FALSE(sealer.Open(fitted, tls13::testing::kNowMs, &opened)) << suites;
  }
}

}  // namespace
}  // namespace onepass::tls::tls13
