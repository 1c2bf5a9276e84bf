// ServerSession against OpenSSL's client over memory: every suite and group, a
// HelloRetryRequest, resumption from our own tickets, application data both ways, KeyUpdate,
// close_notify, what is handed to OpenSSL, and the alert of each failure the client can be made
// to cause (a bad record, a bad binder). Whatever the client accepts, it has verified: the
// certificate chain against the CA, our CertificateVerify and Finished.
#include "server/tls/tls13/handshake/server_session.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "openssl/ssl.h"
#include "server/tls/ticket_keys.h"
#include "tests/unit/server/tls/tls13_test_context.h"
#include "tests/unit/server/tls/tls_test_client.h"

namespace onepass::tls::tls13 {
namespace {

using onepass::tls::testing::ClientOptions;
using onepass::tls::testing::Pump;
using onepass::tls::testing::TestTlsClient;
using onepass::tls::testing::Tls13TestContext;

// One context: the PKI, the policy, the ticket keys, as the engine will make them.
class Tls13ServerSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    tls13_ = Tls13TestContext::Create(&why);
    ASSERT_NE(tls13_, nullptr) << why;
    context_ = tls13_->context();
  }

  ClientOptions Options() const {
    ClientOptions options;
    options.ca_file = tls13_->pki().ca_file();
    options.min_version = TLS1_3_VERSION;
    return options;
  }

  // A first connection, served in full, for the session it leaves the client: *session is
  // resumable (the caller frees it). Callers wrap it in ASSERT_NO_FATAL_FAILURE.
  void FirstConnection(ServerSession& server, SSL_SESSION** session) {
    TestTlsClient client(Options());
    server.Begin(nullptr);
    ASSERT_EQ(Pump(client, server), ServerSession::Status::kConnected) << server.error_reason();
    ExpectQueryAnswered(client, server);
    *session = client.TakeSession();
    ASSERT_NE(*session, nullptr);
    ASSERT_TRUE(SSL_SESSION_is_resumable(*session));
  }

  // A full exchange: handshake, the query, the answer with close_notify.
  void ExpectQueryAnswered(TestTlsClient& client, ServerSession& server) {
    client.Write("query");
    const std::string query = client.TakeOutput();
    server.Receive({reinterpret_cast<const uint8_t*>(query.data()), query.size()});
    uint8_t room[64];
    size_t got = 0;
    ASSERT_EQ(server.Read(room, &got), ServerSession::Status::kConnected);
    EXPECT_EQ(std::string(reinterpret_cast<char*>(room), got), "query");
    const std::string answer = "answer";
    ASSERT_TRUE(server.Write({reinterpret_cast<const uint8_t*>(answer.data()), answer.size()},
                             /*close_notify=*/true));
    const absl::Span<const uint8_t> out = server.output();
    client.GiveInput({reinterpret_cast<const char*>(out.data()), out.size()});
    server.ClearOutput();
    bool closed = false;
    EXPECT_EQ(client.Read(&closed), "answer");
    EXPECT_TRUE(closed);
    EXPECT_FALSE(client.failed());
  }

  std::unique_ptr<Tls13TestContext> tls13_;
  SessionContext context_;
};

struct SuiteGroup {
  const char* suite;
  const char* group;
  uint16_t suite_value;
  uint16_t group_value;
};

TEST_F(Tls13ServerSessionTest, FullHandshakeEverySuiteAndGroup) {
  const SuiteGroup cases[] = {
      {"TLS_AES_128_GCM_SHA256", "X25519", 0x1301, kGroupX25519},
      {"TLS_AES_256_GCM_SHA384", "X25519", 0x1302, kGroupX25519},
      {"TLS_CHACHA20_POLY1305_SHA256", "X25519", 0x1303, kGroupX25519},
      {"TLS_AES_128_GCM_SHA256", "P-256", 0x1301, kGroupSecp256r1},
      {"TLS_AES_256_GCM_SHA384", "P-256", 0x1302, kGroupSecp256r1},
      {"TLS_CHACHA20_POLY1305_SHA256", "P-256", 0x1303, kGroupSecp256r1},
  };
  ServerSession server(context_);
  ASSERT_TRUE(server.ok());
  for (const SuiteGroup& c : cases) {
    SCOPED_TRACE(std::string(c.suite) + " " + c.group);
    ClientOptions options = Options();
    options.ciphersuites = c.suite;
    TestTlsClient client(options);
    ASSERT_EQ(SSL_set1_groups_list(client.ssl(), c.group), 1);
    server.Begin(nullptr);
    EXPECT_EQ(Pump(client, server), ServerSession::Status::kConnected) << server.error_reason();
    EXPECT_EQ(server.suite(), c.suite_value);
    EXPECT_EQ(server.group(), c.group_value);
    EXPECT_FALSE(server.resumed());
    EXPECT_FALSE(server.retried());
    EXPECT_EQ(std::string(server.alpn().begin(), server.alpn().end()), "dot");
    ExpectQueryAnswered(client, server);
  }
}

TEST_F(Tls13ServerSessionTest, HelloRetryRequestForAGroupWithoutShare) {
  ClientOptions options = Options();
  TestTlsClient client(options);
  // OpenSSL's client shares only its first group: X448, which this engine does not do.
  ASSERT_EQ(SSL_set1_groups_list(client.ssl(), "X448:P-256"), 1);
  ServerSession server(context_);
  server.Begin(nullptr);
  EXPECT_EQ(Pump(client, server), ServerSession::Status::kConnected) << server.error_reason();
  EXPECT_TRUE(server.retried());
  EXPECT_EQ(server.group(), kGroupSecp256r1);
  ExpectQueryAnswered(client, server);
}

TEST_F(Tls13ServerSessionTest, ResumesFromItsOwnTicket) {
  ServerSession server(context_);
  SSL_SESSION* session = nullptr;
  ASSERT_NO_FATAL_FAILURE(FirstConnection(server, &session));
  for (const char* groups : {"X25519", "X448:X25519"}) {  // plain, and after a retry
    SCOPED_TRACE(groups);
    ClientOptions options = Options();
    options.session = session;
    TestTlsClient client(options);
    ASSERT_EQ(SSL_set1_groups_list(client.ssl(), groups), 1);
    server.Begin(nullptr);
    ASSERT_EQ(Pump(client, server), ServerSession::Status::kConnected) << server.error_reason();
    EXPECT_TRUE(server.resumed());
    EXPECT_FALSE(server.ticket_refused());
    ExpectQueryAnswered(client, server);
    EXPECT_EQ(SSL_session_reused(client.ssl()), 1);
  }
  SSL_SESSION_free(session);
}

TEST_F(Tls13ServerSessionTest, TicketOfAnotherKeyGivesAFullHandshake) {
  ServerSession server(context_);
  SSL_SESSION* session = nullptr;
  ASSERT_NO_FATAL_FAILURE(FirstConnection(server, &session));
  // The same server after a rotation that dropped the key.
  std::vector<TicketKey> rotated = tls13_->ticket_keys();
  rotated[0].name[0] ^= 0xff;
  rotated[0].aes_key[0] ^= 0xff;
  std::unique_ptr<TicketKeyring> keyring = TicketKeyring::Create(rotated);
  SessionContext context = context_;
  context.tickets = keyring.get();
  ServerSession rotated_server(context);
  ClientOptions options = Options();
  options.session = session;
  TestTlsClient client(options);
  rotated_server.Begin(nullptr);
  ASSERT_EQ(Pump(client, rotated_server), ServerSession::Status::kConnected);
  EXPECT_FALSE(rotated_server.resumed());
  EXPECT_TRUE(rotated_server.ticket_refused());
  ExpectQueryAnswered(client, rotated_server);
  SSL_SESSION_free(session);
}

// The binder is the ClientHello's last 32 bytes (pre_shared_key is the last extension).
void FlipLastByte(std::string& bytes) { bytes.back() ^= 1; }

TEST_F(Tls13ServerSessionTest, WrongBinderIsDecryptError) {
  ServerSession server(context_);
  SSL_SESSION* session = nullptr;
  ASSERT_NO_FATAL_FAILURE(FirstConnection(server, &session));
  ClientOptions options = Options();
  options.session = session;
  TestTlsClient client(options);
  server.Begin(nullptr);
  EXPECT_EQ(Pump(client, server, FlipLastByte), ServerSession::Status::kFailed);
  EXPECT_EQ(server.alert_sent(), AlertDescription::kDecryptError);
  EXPECT_TRUE(client.failed());
  SSL_SESSION_free(session);
}

// The client's second flight (its Finished) with one bit flipped in the record's tag.
void FlipLastByteOfSecondFlight(std::string& bytes) {
  if (bytes[0] == 0x16) return;  // the ClientHello passes
  bytes.back() ^= 1;
}

TEST_F(Tls13ServerSessionTest, CorruptRecordIsBadRecordMac) {
  TestTlsClient client(Options());
  ServerSession server(context_);
  server.Begin(nullptr);
  EXPECT_EQ(Pump(client, server, FlipLastByteOfSecondFlight), ServerSession::Status::kFailed);
  EXPECT_EQ(server.error(), SessionError::kBadRecord);
  EXPECT_EQ(server.alert_sent(), AlertDescription::kBadRecordMac);
  client.Read();  // the client, done with its side of the handshake, reads the alert
  EXPECT_TRUE(client.failed());
}

TEST_F(Tls13ServerSessionTest, AnswersAKeyUpdate) {
  TestTlsClient client(Options());
  ServerSession server(context_);
  server.Begin(nullptr);
  ASSERT_EQ(Pump(client, server), ServerSession::Status::kConnected);
  ASSERT_EQ(SSL_key_update(client.ssl(), SSL_KEY_UPDATE_REQUESTED), 1);
  ExpectQueryAnswered(client, server);  // the query under the client's next keys, the answer
                                        // under ours
}

TEST_F(Tls13ServerSessionTest, HandsToOpenSslWhatItDoesNotServe) {
  struct Case {
    const char* name;
    int max_version;
    const char* suites;
    std::vector<std::string> alpn;
    Fallback fallback;
  };
  const Case cases[] = {
      {"TLS 1.2 only", TLS1_2_VERSION, "", {"dot"}, Fallback::k_not_tls13},
      {"CCM only", TLS1_3_VERSION, "TLS_AES_128_CCM_SHA256", {"dot"}, Fallback::k_suite},
      {"ALPN h2 only", TLS1_3_VERSION, "", {"h2"}, Fallback::k_alpn},
  };
  ServerSession server(context_);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ClientOptions options = Options();
    options.min_version = TLS1_2_VERSION;
    options.max_version = c.max_version;
    options.ciphersuites = c.suites;
    options.alpn = c.alpn;
    TestTlsClient client(options);
    server.Begin(nullptr);
    EXPECT_EQ(Pump(client, server), ServerSession::Status::kFallback);
    EXPECT_EQ(server.fallback(), c.fallback);
    EXPECT_TRUE(server.output().empty());  // nothing was said: OpenSSL gets the same bytes
    EXPECT_FALSE(server.received().empty());
  }
}

// §6.1: close_notify closes the client's side only: a client that sends its query and its
// close_notify together still gets the answer.
TEST_F(Tls13ServerSessionTest, AnswersAQueryThatCameWithCloseNotify) {
  TestTlsClient client(Options());
  ServerSession server(context_);
  server.Begin(nullptr);
  ASSERT_EQ(Pump(client, server), ServerSession::Status::kConnected);
  client.Write("query");
  ASSERT_EQ(SSL_shutdown(client.ssl()), 0);  // close_notify sent, the server's not yet read
  const std::string flight = client.TakeOutput();
  server.Receive({reinterpret_cast<const uint8_t*>(flight.data()), flight.size()});
  uint8_t room[64];
  size_t got = 0;
  ASSERT_EQ(server.Read(room, &got), ServerSession::Status::kConnected);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(room), got), "query");
  EXPECT_EQ(server.Read(room, &got), ServerSession::Status::kClosed);
  EXPECT_EQ(got, 0u);
  const std::string answer = "answer";
  ASSERT_TRUE(server.Write({reinterpret_cast<const uint8_t*>(answer.data()), answer.size()},
                           /*close_notify=*/true));
  const absl::Span<const uint8_t> out = server.output();
  client.GiveInput({reinterpret_cast<const char*>(out.data()), out.size()});
  bool closed = false;
  EXPECT_EQ(client.Read(&closed), "answer");
  EXPECT_TRUE(closed);
}

// Split invariance: the client's bytes one at a time give the same handshake.
TEST_F(Tls13ServerSessionTest, ByteAtATime) {
  TestTlsClient client(Options());
  ServerSession server(context_);
  server.Begin(nullptr);
  ServerSession::Status status = ServerSession::Status::kWantRead;
  for (int round = 0; round < 10 && status != ServerSession::Status::kConnected; ++round) {
    client.Step();
    const std::string to_server = client.TakeOutput();
    for (char byte : to_server) {
      server.Receive({reinterpret_cast<const uint8_t*>(&byte), 1});
      status = server.Handshake();
      ASSERT_NE(status, ServerSession::Status::kFailed) << server.error_reason();
    }
    const absl::Span<const uint8_t> out = server.output();
    client.GiveInput({reinterpret_cast<const char*>(out.data()), out.size()});
    server.ClearOutput();
  }
  EXPECT_EQ(status, ServerSession::Status::kConnected);
  ExpectQueryAnswered(client, server);
}

class Refusing : public AdmissionGate {
 public:
  bool Admit(bool) override { return false; }
};

TEST_F(Tls13ServerSessionTest, GateRefusalFailsBeforeTheKeyExchange) {
  TestTlsClient client(Options());
  ServerSession server(context_);
  Refusing gate;
  server.Begin(&gate);
  EXPECT_EQ(Pump(client, server), ServerSession::Status::kFailed);
  EXPECT_EQ(server.error(), SessionError::kRefused);
}

}  // namespace
}  // namespace onepass::tls::tls13
