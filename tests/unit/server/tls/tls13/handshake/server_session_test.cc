// ServerSession against OpenSSL's client over memory: every suite and group, a
// HelloRetryRequest, resumption from our own tickets, application data both ways, KeyUpdate
// (answered when requested, only then), close_notify, what is handed to OpenSSL and why, the
// admission gate's refusals (the alert they send), and the alert of each failure the client
// can be made to cause (a bad record, a bad binder). Whatever the client accepts, it has verified:
// the certificate chain against the CA, our CertificateVerify and Finished.
#include "server/tls/tls13/handshake/server_session.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "openssl/evp.h"
#include "openssl/rsa.h"
#include "openssl/ssl.h"
#include "server/tls/ticket_keys.h"
#include "server/tls/tls13/handshake/fallback.h"
#include "server/tls/tls13/ticket/session_ticket.h"
#include "server/tls/tls13/wire/client_hello.h"
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

  // The client's "query" read by the server and its "answer" written with close_notify, left
  // in server.output().
  void AnswerQuery(TestTlsClient& client, ServerSession& server) {
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
  }

  // A full exchange: handshake, the query, the answer with close_notify.
  void ExpectQueryAnswered(TestTlsClient& client, ServerSession& server) {
    ASSERT_NO_FATAL_FAILURE(AnswerQuery(client, server));
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

// The first ticket's IV (and age_add) are drawn with the ServerHello's random, once per
// connection: two connections of one reused session slot never share an IV, which under one
// ticket key would break AES-GCM.
TEST_F(Tls13ServerSessionTest, EachConnectionsTicketHasItsOwnIv) {
  ServerSession server(context_);
  std::vector<std::vector<uint8_t>> ivs;
  for (int i = 0; i < 3; ++i) {
    SSL_SESSION* session = nullptr;
    ASSERT_NO_FATAL_FAILURE(FirstConnection(server, &session));
    const uint8_t* ticket = nullptr;
    size_t length = 0;
    SSL_SESSION_get0_ticket(session, &ticket, &length);
    ASSERT_EQ(length, kTicketLength);
    ivs.emplace_back(ticket + kTicketNameLength, ticket + kTicketNameLength + kTicketIvLength);
    SSL_SESSION_free(session);
  }
  EXPECT_NE(ivs[0], ivs[1]);
  EXPECT_NE(ivs[1], ivs[2]);
  EXPECT_NE(ivs[0], ivs[2]);
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

// The records in `bytes` (header included); fails the test when the bytes are not whole
// records.
std::vector<absl::Span<const uint8_t>> Records(absl::Span<const uint8_t> bytes) {
  std::vector<absl::Span<const uint8_t>> records;
  while (bytes.size() >= 5) {
    const size_t length = 5 + (size_t{bytes[3]} << 8 | bytes[4]);
    if (bytes.size() < length) break;
    records.push_back(bytes.subspan(0, length));
    bytes.remove_prefix(length);
  }
  EXPECT_TRUE(bytes.empty()) << bytes.size() << " bytes are not a whole record";
  return records;
}

// §4.6.3: a KeyUpdate with update_requested is answered by the server's own KeyUpdate (one
// more sealed record before the answer, under the server's old keys; the answer and the
// close_notify under its next ones), one with update_not_requested by none. The client reads
// the answer only if the server's keys moved on when its KeyUpdate said so.
TEST_F(Tls13ServerSessionTest, AnswersAKeyUpdate) {
  struct Case {
    const char* name;
    int update;  // SSL_KEY_UPDATE_*; -1: no KeyUpdate
    size_t extra_records;
  };
  const Case cases[] = {
      {"none", -1, 0},
      {"update_not_requested", SSL_KEY_UPDATE_NOT_REQUESTED, 0},
      {"update_requested", SSL_KEY_UPDATE_REQUESTED, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TestTlsClient client(Options());
    ServerSession server(context_);
    server.Begin(nullptr);
    ASSERT_EQ(Pump(client, server), ServerSession::Status::kConnected);
    if (c.update >= 0) {
      ASSERT_EQ(SSL_key_update(client.ssl(), c.update), 1);
    }
    // The query after the KeyUpdate, under the client's next keys.
    ASSERT_NO_FATAL_FAILURE(AnswerQuery(client, server));
    const absl::Span<const uint8_t> out = server.output();
    const std::vector<absl::Span<const uint8_t>> records = Records(out);
    // The answer and the close_notify, each one sealed record, after the KeyUpdate if any.
    EXPECT_EQ(records.size(), 2 + c.extra_records);
    for (const absl::Span<const uint8_t> record : records) {
      EXPECT_EQ(record[0], 23) << "a record of type " << int{record[0]};
    }
    client.GiveInput({reinterpret_cast<const char*>(out.data()), out.size()});
    server.ClearOutput();
    bool closed = false;
    EXPECT_EQ(client.Read(&closed), "answer");
    EXPECT_TRUE(closed);
    EXPECT_FALSE(client.failed());
  }
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

// OpenSSL's client's first flight (its ClientHello, one record).
std::string FirstFlight(const ClientOptions& options) {
  TestTlsClient client(options);
  client.Step();
  return client.TakeOutput();
}

// `record` (one ClientHello in one record) with the extension `type` put first in its
// extensions, every length grown to match.
std::string WithExtensionFirst(std::string record, uint16_t type, const std::string& data) {
  size_t at = 5 + 4 + 2 + 32;  // record header, handshake header, legacy_version, random
  at += 1 + static_cast<uint8_t>(record[at]);  // session id
  at += 2 + (static_cast<uint8_t>(record[at]) << 8 | static_cast<uint8_t>(record[at + 1]));
  at += 1 + static_cast<uint8_t>(record[at]);  // compression methods
  std::string extension = {static_cast<char>(type >> 8), static_cast<char>(type),
                           static_cast<char>(data.size() >> 8), static_cast<char>(data.size())};
  extension += data;
  const size_t grow = extension.size();
  auto add = [&record, grow](size_t pos, size_t width) {
    size_t value = 0;
    for (size_t i = 0; i < width; ++i) value = value << 8 | static_cast<uint8_t>(record[pos + i]);
    value += grow;
    for (size_t i = width; i-- > 0; value >>= 8) record[pos + i] = static_cast<char>(value);
  };
  add(3, 2);   // the record's length
  add(6, 3);   // the ClientHello's
  add(at, 2);  // the extensions'
  record.insert(at + 2, extension);
  return record;
}

// What the engine hands to OpenSSL, from the first bytes alone: kFallback with its reason,
// nothing sent, and every byte received kept for OpenSSL to read.
TEST_F(Tls13ServerSessionTest, HandsToOpenSslWhatItDoesNotUnderstand) {
  const std::string hello = FirstFlight(Options());
  ASSERT_GT(hello.size(), 5u);
  ASSERT_EQ(hello[0], 22);
  const std::string cookie = {0, 4, 'a', 'b', 'c', 'd'};  // cookie<1..2^16-1>
  struct Case {
    const char* name;
    std::string bytes;
    Fallback fallback;
  };
  const Case cases[] = {
      // §4.2.2: a cookie belongs in the ClientHello that answers a HelloRetryRequest.
      {"a cookie in a first ClientHello", WithExtensionFirst(hello, kExtCookie, cookie),
       Fallback::k_cookie},
      {"application data first", std::string("\x17\x03\x03\x00\x05hello", 10),
       Fallback::k_not_understood},
      // Appendix D.4: a change_cipher_spec may come after the first ClientHello, not before.
      {"change_cipher_spec first", std::string("\x14\x03\x03\x00\x01\x01", 6) + hello,
       Fallback::k_not_understood},
  };
  ServerSession server(context_);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    server.Begin(nullptr);
    const absl::Span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(c.bytes.data()),
                                          c.bytes.size());
    server.Receive(bytes);
    EXPECT_EQ(server.Handshake(), ServerSession::Status::kFallback) << server.error_reason();
    EXPECT_EQ(server.fallback(), c.fallback) << FallbackName(server.fallback());
    EXPECT_TRUE(server.output().empty());
    EXPECT_EQ(std::vector<uint8_t>(server.received().begin(), server.received().end()),
              std::vector<uint8_t>(bytes.begin(), bytes.end()));
  }
  // The same hello unaltered is served (the cases above fall back for what was changed).
  server.Begin(nullptr);
  server.Receive({reinterpret_cast<const uint8_t*>(hello.data()), hello.size()});
  EXPECT_EQ(server.Handshake(), ServerSession::Status::kWantRead) << server.error_reason();
  EXPECT_FALSE(server.output().empty());
}

// A key this engine cannot sign with (it signs ECDSA P-256 only): every ClientHello goes to
// OpenSSL, which serves that key.
TEST_F(Tls13ServerSessionTest, HandsToOpenSslWhenItsKeyIsNotEcdsaP256) {
  const std::string hello = FirstFlight(Options());
  ASSERT_FALSE(hello.empty());
  for (const char* kind : {"P-384", "RSA"}) {
    SCOPED_TRACE(kind);
    EVP_PKEY* key = std::string(kind) == "RSA" ? EVP_RSA_gen(2048) : EVP_EC_gen("P-384");
    ASSERT_NE(key, nullptr);
    SessionContext context = context_;
    context.private_key = key;
    {
      ServerSession server(context);
      server.Begin(nullptr);
      server.Receive({reinterpret_cast<const uint8_t*>(hello.data()), hello.size()});
      EXPECT_EQ(server.Handshake(), ServerSession::Status::kFallback) << server.error_reason();
      EXPECT_EQ(server.fallback(), Fallback::k_certificate) << FallbackName(server.fallback());
      EXPECT_TRUE(server.output().empty());
      EXPECT_EQ(std::string(server.received().begin(), server.received().end()), hello);
    }
    EVP_PKEY_free(key);
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

// Admits the first `admitted` calls, refuses the rest, and keeps what each call asked.
class Gate : public AdmissionGate {
 public:
  explicit Gate(int admitted) : admitted_(admitted) {}
  bool Admit(bool resumption) override {
    asked_.push_back(resumption);
    return static_cast<int>(asked_.size()) <= admitted_;
  }
  const std::vector<bool>& asked() const { return asked_; }

 private:
  int admitted_;
  std::vector<bool> asked_;
};

// The ClientHello alone, then what a refusal must be: kFailed with kRefused, and one plaintext
// handshake_failure alert record (15 03 03 00 02 02 28), nothing before it (§6: before our
// ServerHello alerts are not sealed).
void ExpectRefusedClientHello(TestTlsClient& client, ServerSession& server) {
  client.Step();
  const std::string hello = client.TakeOutput();
  ASSERT_FALSE(hello.empty());
  server.Receive({reinterpret_cast<const uint8_t*>(hello.data()), hello.size()});
  EXPECT_EQ(server.Handshake(), ServerSession::Status::kFailed);
  EXPECT_EQ(server.error(), SessionError::kRefused);
  EXPECT_EQ(server.alert_sent(), AlertDescription::kHandshakeFailure);
  const absl::Span<const uint8_t> out = server.output();
  const std::vector<uint8_t> alert = {21, 3, 3, 0, 2, 2, 40};
  EXPECT_EQ(std::vector<uint8_t>(out.begin(), out.end()), alert);
  client.GiveInput(out);
  server.ClearOutput();
  client.Step();
  EXPECT_TRUE(client.failed());
}

TEST_F(Tls13ServerSessionTest, GateRefusalFailsBeforeTheKeyExchange) {
  TestTlsClient client(Options());
  ServerSession server(context_);
  Gate gate(/*admitted=*/0);
  server.Begin(&gate);
  ExpectRefusedClientHello(client, server);
  EXPECT_EQ(gate.asked(), std::vector<bool>{false});
}

// A ticket this server cannot open (it looks made up: another key's) is admitted at the
// resumed price once, then asked for again as the full handshake it turned into; refused there,
// the session fails as any refusal does (server_flight.cc's second Admit(false)).
TEST_F(Tls13ServerSessionTest, GateRefusesTheFullHandshakeAnUnopenedTicketTurnsInto) {
  SSL_SESSION* session = nullptr;
  {
    ServerSession server(context_);
    ASSERT_NO_FATAL_FAILURE(FirstConnection(server, &session));
  }
  std::vector<TicketKey> other_keys = tls13_->ticket_keys();
  other_keys[0].name[0] ^= 0xff;
  other_keys[0].aes_key[0] ^= 0xff;
  std::unique_ptr<TicketKeyring> keyring = TicketKeyring::Create(other_keys);
  ASSERT_NE(keyring, nullptr);
  SessionContext context = context_;
  context.tickets = keyring.get();
  ServerSession server(context);
  ClientOptions options = Options();
  options.session = session;
  TestTlsClient client(options);
  Gate gate(/*admitted=*/1);
  server.Begin(&gate);
  ExpectRefusedClientHello(client, server);
  EXPECT_EQ(gate.asked(), (std::vector<bool>{true, false}));
  EXPECT_TRUE(server.ticket_refused());
  EXPECT_FALSE(server.resumed());
  SSL_SESSION_free(session);
}

}  // namespace
}  // namespace onepass::tls::tls13
