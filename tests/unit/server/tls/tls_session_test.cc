// TlsSession against OpenSSL's own client over memory: what a resolver's DoT connection does,
// without sockets. Certificates are made at test time (tls_test_pki.h).
#include "server/tls/tls_session.h"

#include <openssl/ssl.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "server/tls/tls_server_context.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::tls {
namespace {

using testing::ClientOptions;
using testing::Pump;
using testing::TestPkiDir;
using testing::TestTlsClient;

// A DNS-over-TCP query as a resolver sends it: length prefix, then the message (RFC 7766 §8).
const std::string kQuery(
    "\x00\x1d\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07"
    "example\x03"
    "com\x00\x00\x01\x00\x01",
    31);

absl::Span<const uint8_t> Bytes(absl::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}
absl::string_view Text(absl::Span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

class TlsSessionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new TestPkiDir(); }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }

  // The default engine (onepass) unless ONEPASS_TLS_ENGINE names another (scripts/test.sh runs
  // this test again with "openssl": every behaviour here holds for both engines).
  std::shared_ptr<const TlsServerContext> MakeContext(TlsConfig config = {}) {
    if (const char* engine = std::getenv("ONEPASS_TLS_ENGINE"); engine != nullptr && *engine) {
      config.engine = engine;
    }
    config.cert_file = pki_->chain_file();
    config.key_file = pki_->key_file();
    auto context = TlsServerContext::Create(config, absl::Now());
    EXPECT_TRUE(context.ok()) << context.status();
    return context.ok() ? *context : nullptr;
  }

  // The server flight in reply to `hello` fed to `session` in one piece, as a string.
  std::string SendPending(TlsSession& session, TestTlsClient* client = nullptr) {
    std::string bytes(Text(session.Pending()));
    session.ConsumePending(bytes.size());
    if (client != nullptr) client->GiveInput(bytes);
    return bytes;
  }

  // A whole connection: handshake, kQuery, the answer (echoed) with close_notify.
  // Returns the client's session for resumption (the caller frees it).
  SSL_SESSION* Connect(TlsSession& session, const std::shared_ptr<const TlsServerContext>& ctx,
                       const ClientOptions& options = {}) {
    EXPECT_TRUE(session.Start(ctx, &stats_));
    TestTlsClient client(options);
    Pump(client, session);
    EXPECT_TRUE(session.handshake_done()) << TlsFailureName(session.failure());
    client.Write(kQuery);
    std::string plain;
    Pump(client, session, &plain);
    EXPECT_EQ(plain, kQuery);
    EXPECT_TRUE(session.Encrypt(Bytes(plain), /*close_notify=*/true));
    SendPending(session, &client);
    bool closed = false;
    EXPECT_EQ(client.Read(&closed), kQuery);
    EXPECT_TRUE(closed);
    return client.TakeSession();
  }

  static TestPkiDir* pki_;
  TlsStats stats_;
};

TestPkiDir* TlsSessionTest::pki_ = nullptr;

TEST_F(TlsSessionTest, FullHandshakeEchoesOneQuerySelectsDotAndClosesWithCloseNotify) {
  auto context = MakeContext();
  TlsSession session;
  ASSERT_TRUE(session.Start(context, &stats_));
  ClientOptions options;
  options.ca_file = pki_->ca_file();  // the client verifies the chain we serve
  TestTlsClient client(options);

  client.Step();
  FeedResult hello = session.Feed(Bytes(client.TakeOutput()), {});
  EXPECT_EQ(hello.result, TlsResult::kNeedMore);
  EXPECT_FALSE(session.Pending().empty());  // the whole first flight, for one send
  SendPending(session, &client);
  ASSERT_TRUE(client.Step());
  EXPECT_EQ(SSL_get_verify_result(client.ssl()), X509_V_OK);
  // The client's Finished and its query in one segment: the handshake completes and the
  // plaintext comes out of the same Feed (the single pass).
  client.Write(kQuery);
  uint8_t room[512];
  FeedResult query = session.Feed(Bytes(client.TakeOutput()), room);
  ASSERT_EQ(query.result, TlsResult::kPlaintext);
  EXPECT_TRUE(session.handshake_done());
  EXPECT_FALSE(session.resumed());
  EXPECT_EQ(session.alpn(), "dot");
  EXPECT_EQ(session.version(), TLS1_3_VERSION);
  EXPECT_EQ(Text({room, query.plaintext}), kQuery);

  SendPending(session, &client);  // the session ticket
  ASSERT_TRUE(session.Encrypt({room, query.plaintext}, /*close_notify=*/false));
  // The answer is one record: a 5-byte header and exactly the length it announces.
  const auto record = session.Pending();
  ASSERT_GE(record.size(), 5u);
  EXPECT_EQ(record[0], 23);  // application_data (RFC 8446 §5.2)
  EXPECT_EQ(record.size(), 5u + (record[3] << 8 | record[4]));
  SendPending(session, &client);
  bool closed = true;
  EXPECT_EQ(client.Read(&closed), kQuery);
  EXPECT_FALSE(closed);
  ASSERT_TRUE(session.Close());
  SendPending(session, &client);
  EXPECT_EQ(client.Read(&closed), "");
  EXPECT_TRUE(closed);

  EXPECT_EQ(stats_.handshakes_full, 1u);
  EXPECT_EQ(stats_.tls13, 1u);
  EXPECT_EQ(stats_.alpn_selected, 1u);
  EXPECT_EQ(stats_.failed_total(), 0u);
}

TEST_F(TlsSessionTest, AnswerAndCloseNotifyLeaveInOnePendingChunk) {
  auto context = MakeContext();
  TlsSession session;
  ASSERT_TRUE(session.Start(context, &stats_));
  TestTlsClient client;
  Pump(client, session);
  client.Write(kQuery);
  std::string plain;
  Pump(client, session, &plain);
  ASSERT_EQ(plain, kQuery);
  ASSERT_TRUE(session.Encrypt(Bytes(plain), /*close_notify=*/true));
  const std::string sent = SendPending(session, &client);
  // Two records back to back: the answer, then the close_notify alert record.
  const size_t first = 5 + (static_cast<uint8_t>(sent[3]) << 8 | static_cast<uint8_t>(sent[4]));
  ASSERT_GT(sent.size(), first + 5);
  EXPECT_EQ(sent.size(), first + 5 +
                             (static_cast<uint8_t>(sent[first + 3]) << 8 |
                              static_cast<uint8_t>(sent[first + 4])));
  EXPECT_TRUE(session.Pending().empty());
  bool closed = false;
  EXPECT_EQ(client.Read(&closed), kQuery);
  EXPECT_TRUE(closed);
}

TEST_F(TlsSessionTest, IdleBuffersAreReleasedBetweenQueriesAndTheConnectionGoesOn) {
  auto context = MakeContext();
  TlsSession session;
  ASSERT_TRUE(session.Start(context, &stats_));
  TestTlsClient client;
  Pump(client, session);
  for (int query = 0; query < 3; ++query) {
    client.Write(kQuery);
    std::string plain;
    Pump(client, session, &plain);
    ASSERT_EQ(plain, kQuery) << "query " << query;
    ASSERT_TRUE(session.Encrypt(Bytes(plain), /*close_notify=*/false));
    EXPECT_FALSE(session.ReleaseIdleBuffers()) << "the answer is still pending";
    SendPending(session, &client);
    bool closed = true;
    EXPECT_EQ(client.Read(&closed), kQuery);
    EXPECT_FALSE(closed);
    // Idle: nothing pending, nothing held. The library's record buffers go.
    EXPECT_TRUE(session.ReleaseIdleBuffers()) << "query " << query;
  }
  ASSERT_TRUE(session.Close());
  SendPending(session, &client);
  bool closed = false;
  EXPECT_EQ(client.Read(&closed), "");
  EXPECT_TRUE(closed);
  EXPECT_EQ(stats_.failed_total(), 0u);
}

TEST_F(TlsSessionTest, ClientWithoutAlpnIsServed) {
  TlsSession session;
  ClientOptions options;
  options.alpn = {};
  SSL_SESSION_free(Connect(session, MakeContext(), options));
  EXPECT_EQ(session.alpn(), "");
  EXPECT_EQ(stats_.alpn_absent, 1u);
}

TEST_F(TlsSessionTest, AlpnWithoutDotIsRefusedWithNoApplicationProtocol) {
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(), &stats_));
  ClientOptions options;
  options.alpn = {"h2", "http/1.1"};
  TestTlsClient client(options);
  client.Step();
  FeedResult result = session.Feed(Bytes(client.TakeOutput()), {});
  EXPECT_EQ(result.result, TlsResult::kFailed);
  EXPECT_EQ(session.failure(), TlsFailure::k_no_alpn_match);
  // RFC 7301 §3.2: a fatal no_application_protocol (120) alert, in plaintext before the
  // ServerHello: type 21, version, length 2, level fatal (2), description.
  EXPECT_EQ(Text(session.Pending()), absl::string_view("\x15\x03\x03\x00\x02\x02\x78", 7));
  EXPECT_EQ(stats_.failed_by(TlsFailure::k_no_alpn_match), 1u);
  // Later calls change nothing.
  EXPECT_EQ(session.Feed(Bytes("x"), {}).result, TlsResult::kFailed);
  EXPECT_FALSE(session.Encrypt(Bytes("x"), true));
}

TEST_F(TlsSessionTest, NoAlpnOfOursIgnoresTheClientsOffer) {
  // A protocol without an ALPN name (Whois over TLS): whatever the client offers, it is served
  // and nothing is selected.
  TlsConfig config;
  config.alpn = {};
  TlsSession session;
  ClientOptions options;
  options.alpn = {"h2", "http/1.1"};
  SSL_SESSION_free(Connect(session, MakeContext(config), options));
  EXPECT_TRUE(session.alpn().empty());
  EXPECT_EQ(stats_.failed_total(), 0u);
}

TEST_F(TlsSessionTest, ClientHelloIsToldFromPlainRequests) {
  TestTlsClient client;
  client.Step();
  const std::string hello = client.TakeOutput();
  EXPECT_TRUE(StartsWithClientHello(Bytes(hello)));
  EXPECT_TRUE(StartsWithClientHello(Bytes(hello.substr(0, 6))));
  EXPECT_FALSE(StartsWithClientHello(Bytes(hello.substr(0, 5))));  // too few to tell
  // A DNS query over TCP (length prefix, ID, flags RD), an HTTP request, a Whois query.
  EXPECT_FALSE(StartsWithClientHello(Bytes(std::string("\x00\x1d\x12\x34\x01\x00", 6))));
  EXPECT_FALSE(StartsWithClientHello(Bytes("GET /ocsp HTTP/1.1\r\n")));
  EXPECT_FALSE(StartsWithClientHello(Bytes("example.com\r\n")));
}

TEST_F(TlsSessionTest, Tls12IsRefusedByDefault) {
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(), &stats_));
  ClientOptions options;
  options.max_version = TLS1_2_VERSION;
  TestTlsClient client(options);
  FeedResult result = Pump(client, session);
  EXPECT_EQ(result.result, TlsResult::kFailed);
  EXPECT_EQ(session.failure(), TlsFailure::k_protocol_version);
  EXPECT_TRUE(client.failed());
}

TEST_F(TlsSessionTest, Tls12IsServedWhenAllowedAndResumes) {
  TlsConfig config;
  config.allow_tls12 = true;
  auto context = MakeContext(config);
  ClientOptions options;
  options.max_version = TLS1_2_VERSION;
  TlsSession session;
  SSL_SESSION* ticket = Connect(session, context, options);
  EXPECT_EQ(session.version(), TLS1_2_VERSION);
  EXPECT_EQ(stats_.tls12, 1u);
  options.session = ticket;
  SSL_SESSION_free(Connect(session, context, options));
  EXPECT_TRUE(session.resumed());
  SSL_SESSION_free(ticket);
}

// OpenSSL's clients (Unbound, s_client, dnsperf) list AES-256-GCM first; we pick AES-128-GCM, the
// cheaper key schedule, unless the client puts ChaCha20 first (no AES hardware).
TEST_F(TlsSessionTest, OurCipherSuiteOrderWinsExceptForAClientThatPutsChaChaFirst) {
  auto context = MakeContext();
  TlsSession session;
  SSL_SESSION_free(Connect(session, context));
  EXPECT_EQ(stats_.cipher[0], 1u) << "aes128gcm";
  ClientOptions chacha_first;
  chacha_first.ciphersuites = "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";
  SSL_SESSION_free(Connect(session, context, chacha_first));
  EXPECT_EQ(stats_.cipher[2], 1u) << "chacha20";
  ClientOptions aes256_only;
  aes256_only.ciphersuites = "TLS_AES_256_GCM_SHA384";
  SSL_SESSION_free(Connect(session, context, aes256_only));
  EXPECT_EQ(stats_.cipher[1], 1u) << "aes256gcm";

  TlsConfig config;
  config.ciphersuites = "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256";  // --tls-ciphersuites
  TlsSession other;
  SSL_SESSION_free(Connect(other, MakeContext(config)));
  EXPECT_EQ(stats_.cipher[1], 2u);
}

TEST_F(TlsSessionTest, TicketResumesOnAReusedSlotAndOnAnotherContextWithTheSameKeys) {
  const std::string keys = pki_->WriteFile("keys-a", std::string(80, 'a'));
  TlsConfig config;
  config.ticket_keys_file = keys;
  auto first = MakeContext(config);
  TlsSession session;
  SSL_SESSION* ticket = Connect(session, first);
  ASSERT_NE(ticket, nullptr);
  ClientOptions options;
  options.session = ticket;
  SSL_SESSION_free(Connect(session, first, options));  // the same slot, SSL_clear'ed
  EXPECT_TRUE(session.resumed());
  // Another worker's or host's context with the same file (a reload builds a new one too).
  auto second = MakeContext(config);
  TlsSession other;
  SSL_SESSION_free(Connect(other, second, options));
  EXPECT_TRUE(other.resumed());
  EXPECT_EQ(stats_.handshakes_full, 1u);
  EXPECT_EQ(stats_.handshakes_resumed, 2u);
  SSL_SESSION_free(ticket);
}

TEST_F(TlsSessionTest, TicketOfARetiredKeyGivesAFullHandshakeAndOfAnOlderKeyResumes) {
  const std::string key_a(80, 'a'), key_b(80, 'b');
  TlsConfig config;
  config.ticket_keys_file = pki_->WriteFile("keys-old", key_a);
  TlsSession session;
  SSL_SESSION* ticket = Connect(session, MakeContext(config));
  ClientOptions options;
  options.session = ticket;

  config.ticket_keys_file = pki_->WriteFile("keys-rotated", key_b + key_a);  // a still decrypts
  SSL_SESSION_free(Connect(session, MakeContext(config), options));
  EXPECT_TRUE(session.resumed());

  config.ticket_keys_file = pki_->WriteFile("keys-retired", key_b);  // a is gone
  SSL_SESSION_free(Connect(session, MakeContext(config), options));
  EXPECT_FALSE(session.resumed());
  EXPECT_TRUE(session.handshake_done());
  EXPECT_EQ(stats_.tickets_unknown_key, 1u);
  EXPECT_EQ(stats_.failed_total(), 0u);
  SSL_SESSION_free(ticket);
}

TEST_F(TlsSessionTest, WithoutKeyFileTicketsResumeWithinTheProcessAcrossContexts) {
  TlsSession session;
  SSL_SESSION* ticket = Connect(session, MakeContext());
  ClientOptions options;
  options.session = ticket;
  SSL_SESSION_free(Connect(session, MakeContext(), options));  // a reload's new context
  EXPECT_TRUE(session.resumed());
  SSL_SESSION_free(ticket);
}

TEST_F(TlsSessionTest, Tls12RenegotiationIsRefusedWithoutASecondHandshake) {
  TlsConfig config;
  config.allow_tls12 = true;
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(config), &stats_));
  ClientOptions options;
  options.max_version = TLS1_2_VERSION;
  TestTlsClient client(options);
  Pump(client, session);
  ASSERT_EQ(session.version(), TLS1_2_VERSION);
  ASSERT_EQ(SSL_renegotiate(client.ssl()), 1);
  client.Step();  // the client's renegotiating ClientHello, encrypted
  uint8_t room[64];
  FeedResult result = session.Feed(Bytes(client.TakeOutput()), room);
  EXPECT_NE(result.result, TlsResult::kFailed) << TlsFailureName(session.failure());
  // RFC 5246 §7.2.2: a no_renegotiation warning; the connection goes on, nothing redone.
  EXPECT_FALSE(session.Pending().empty());
  EXPECT_EQ(stats_.handshakes_full, 1u);
}

// A slot's session after a client that vanished mid-handshake, and after one that failed,
// serves the next client as if new (the NSD defect: clients that close early).
TEST_F(TlsSessionTest, SlotServesTheNextClientAfterAnAbandonedOrFailedHandshake) {
  auto context = MakeContext();
  TlsSession session;
  for (size_t cut : {size_t{1}, size_t{5}, size_t{100}}) {
    ASSERT_TRUE(session.Start(context, &stats_));
    TestTlsClient gone;
    gone.Step();
    session.Feed(Bytes(gone.TakeOutput().substr(0, cut)), {});
    SSL_SESSION_free(Connect(session, context));
  }
  ASSERT_TRUE(session.Start(context, &stats_));
  TestTlsClient waiting;  // got our first flight, never answered
  Pump(waiting, session);
  ASSERT_TRUE(session.Start(context, &stats_));
  EXPECT_EQ(session.Feed(Bytes("GET /"), {}).result, TlsResult::kFailed);
  SSL_SESSION_free(Connect(session, context));
  EXPECT_EQ(stats_.failed_by(TlsFailure::k_not_tls), 1u);
  EXPECT_EQ(stats_.handshakes_full, 5u);
}

TEST_F(TlsSessionTest, ReusedSlotForgetsThePreviousConnection) {
  auto context = MakeContext();
  TlsSession session;
  SSL_SESSION_free(Connect(session, context));
  EXPECT_EQ(session.alpn(), "dot");
  ClientOptions no_alpn;
  no_alpn.alpn = {};
  SSL_SESSION_free(Connect(session, context, no_alpn));
  EXPECT_EQ(session.alpn(), "");
  EXPECT_FALSE(session.resumed());
}

TEST_F(TlsSessionTest, ReleaseLetsGoOfTheContext) {
  auto context = MakeContext();
  std::weak_ptr<const TlsServerContext> watch = context;
  TlsSession session;
  SSL_SESSION_free(Connect(session, context));
  context.reset();
  EXPECT_FALSE(watch.expired());  // the idle slot still holds it
  session.Release();
  EXPECT_TRUE(watch.expired());
  SSL_SESSION_free(Connect(session, MakeContext()));  // and serves again after Start
}

// Bytes that are not TLS on the TLS port, whole and split at every point: not_tls, no alert.
TEST_F(TlsSessionTest, GarbageFirstBytesFailAsNotTlsAtEverySplit) {
  auto context = MakeContext();
  const std::string inputs[] = {kQuery, "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                                std::string("\x16\x02\x00", 3), std::string("\x16\x03\x09", 3)};
  for (const std::string& input : inputs) {
    for (size_t split = 0; split <= input.size(); ++split) {
      TlsSession session;
      ASSERT_TRUE(session.Start(context, &stats_));
      FeedResult result = session.Feed(Bytes(input.substr(0, split)), {});
      if (result.result != TlsResult::kFailed) {
        result = session.Feed(Bytes(input.substr(split)), {});
      }
      EXPECT_EQ(result.result, TlsResult::kFailed) << input << " split " << split;
      EXPECT_EQ(session.failure(), TlsFailure::k_not_tls);
      EXPECT_TRUE(session.Pending().empty());
    }
  }
}

TEST_F(TlsSessionTest, BadRecordAfterAValidHeaderFailsCleanly) {
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(), &stats_));
  // A handshake record whose body is no ClientHello.
  const std::string record("\x16\x03\x01\x00\x04\x01\x00\x00\x00", 9);
  EXPECT_EQ(session.Feed(Bytes(record), {}).result, TlsResult::kFailed);
  EXPECT_NE(session.failure(), TlsFailure::k_not_tls);
  EXPECT_NE(session.failure(), TlsFailure::k_internal);
}

TEST_F(TlsSessionTest, HandshakeBytesAreBounded) {
  TlsConfig config;
  config.max_handshake_bytes = 100;
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(config), &stats_));
  TestTlsClient client;
  client.Step();
  EXPECT_EQ(session.Feed(Bytes(client.TakeOutput()), {}).result, TlsResult::kFailed);
  EXPECT_EQ(session.failure(), TlsFailure::k_handshake_too_large);
}

// A 16 KB ClientHello (a long ALPN list, "dot" last) spans two records: served, split or not.
TEST_F(TlsSessionTest, SixteenKilobyteClientHelloIsServedWithinTheBound) {
  auto context = MakeContext();
  ClientOptions options;
  options.alpn.assign(100, std::string(160, 'x'));
  options.alpn.push_back("dot");
  for (size_t chunk : {size_t{100000}, size_t{1000}}) {
    TlsSession session;
    ASSERT_TRUE(session.Start(context, &stats_));
    TestTlsClient client(options);
    client.Step();
    const std::string hello = client.TakeOutput();
    ASSERT_GT(hello.size(), 16000u);
    for (size_t at = 0; at < hello.size(); at += chunk) {
      ASSERT_NE(session.Feed(Bytes(hello.substr(at, chunk)), {}).result, TlsResult::kFailed)
          << TlsFailureName(session.failure());
    }
    SendPending(session, &client);
    EXPECT_TRUE(client.Step());
    Pump(client, session);
    EXPECT_TRUE(session.handshake_done());
    EXPECT_EQ(session.alpn(), "dot");
  }
}

TEST_F(TlsSessionTest, OutputBeyondTheBoundFailsTheSession) {
  TlsConfig config;
  config.max_output_bytes = 4096;
  TlsSession session;
  auto context = MakeContext(config);
  ASSERT_TRUE(session.Start(context, &stats_));
  TestTlsClient client;
  Pump(client, session);
  ASSERT_TRUE(session.handshake_done());
  EXPECT_FALSE(session.Encrypt(Bytes(std::string(8192, 'x')), true));
  EXPECT_EQ(session.failure(), TlsFailure::k_output_full);
}

// The ClientHello whole, byte by byte and at every two-way split: the same outcome, a server
// flight that completes the client's handshake.
TEST_F(TlsSessionTest, ClientHelloSplitInvariance) {
  auto context = MakeContext();
  auto complete_with = [&](const std::function<void(TlsSession&, const std::string&)>& feed) {
    TlsSession session;
    EXPECT_TRUE(session.Start(context, &stats_));
    TestTlsClient client;
    client.Step();
    feed(session, client.TakeOutput());
    EXPECT_FALSE(session.failed()) << TlsFailureName(session.failure());
    SendPending(session, &client);
    EXPECT_TRUE(client.Step());
    client.Write(kQuery);
    uint8_t room[512];
    FeedResult result = session.Feed(Bytes(client.TakeOutput()), room);
    EXPECT_EQ(result.result, TlsResult::kPlaintext);
    EXPECT_EQ(Text({room, result.plaintext}), kQuery);
  };
  complete_with([](TlsSession& s, const std::string& hello) {
    EXPECT_EQ(s.Feed(Bytes(hello), {}).consumed, hello.size());
  });
  complete_with([](TlsSession& s, const std::string& hello) {
    for (char c : hello) {
      FeedResult r = s.Feed(Bytes(std::string(1, c)), {});
      EXPECT_EQ(r.consumed, 1u);
      EXPECT_EQ(r.result, TlsResult::kNeedMore);
    }
  });
  TestTlsClient probe;
  probe.Step();
  const size_t size = probe.TakeOutput().size();
  for (size_t split = 1; split < size; ++split) {
    complete_with([split](TlsSession& s, const std::string& hello) {
      EXPECT_TRUE(s.Pending().empty());
      s.Feed(Bytes(hello.substr(0, split)), {});
      EXPECT_TRUE(s.Pending().empty()) << "answered before the ClientHello was whole";
      s.Feed(Bytes(hello.substr(split)), {});
    });
  }
  EXPECT_EQ(stats_.failed_total(), 0u);
}

// The client's Finished and query at every split: the same plaintext, whatever the cut.
TEST_F(TlsSessionTest, FinishedAndQuerySplitInvariance) {
  auto context = MakeContext();
  for (size_t split = 0;; ++split) {
    TlsSession session;
    ASSERT_TRUE(session.Start(context, &stats_));
    TestTlsClient client;
    client.Step();
    session.Feed(Bytes(client.TakeOutput()), {});
    SendPending(session, &client);
    ASSERT_TRUE(client.Step());
    client.Write(kQuery);
    const std::string flight = client.TakeOutput();
    if (split > flight.size()) break;
    uint8_t room[512];
    std::string plain;
    for (const std::string& part : {flight.substr(0, split), flight.substr(split)}) {
      FeedResult result = session.Feed(Bytes(part), room);
      ASSERT_NE(result.result, TlsResult::kFailed) << split;
      EXPECT_EQ(result.consumed, part.size());
      plain.append(reinterpret_cast<const char*>(room), result.plaintext);
    }
    EXPECT_EQ(plain, kQuery) << split;
  }
}

TEST_F(TlsSessionTest, PlaintextLargerThanTheRoomComesOutOverSeveralFeeds) {
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(), &stats_));
  TestTlsClient client;
  Pump(client, session);
  const std::string big(3000, 'q');
  client.Write(big);
  std::string flight = client.TakeOutput();
  uint8_t room[1000];
  std::string plain;
  for (int i = 0; i < 10 && plain.size() < big.size(); ++i) {
    FeedResult result = session.Feed(Bytes(flight), room);
    ASSERT_NE(result.result, TlsResult::kFailed);
    plain.append(reinterpret_cast<const char*>(room), result.plaintext);
    flight.erase(0, result.consumed);
  }
  EXPECT_EQ(plain, big);
}

TEST_F(TlsSessionTest, PeerCloseNotifyIsReported) {
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(), &stats_));
  TestTlsClient client;
  Pump(client, session);
  SSL_shutdown(client.ssl());
  uint8_t room[64];
  EXPECT_EQ(session.Feed(Bytes(client.TakeOutput()), room).result, TlsResult::kPeerClosed);
  EXPECT_EQ(stats_.close_notify_received, 1u);
}

TEST_F(TlsSessionTest, ClientRefusingOurCertificateIsCountedAsPeerAlert) {
  TlsSession session;
  ASSERT_TRUE(session.Start(MakeContext(), &stats_));
  ClientOptions options;
  options.ca_file = pki_->other_key_file();  // no CA in it: verification fails
  TestTlsClient client(options);
  Pump(client, session);
  EXPECT_TRUE(client.failed());
  EXPECT_EQ(session.failure(), TlsFailure::k_peer_alert);
}

}  // namespace
}  // namespace onepass::tls
