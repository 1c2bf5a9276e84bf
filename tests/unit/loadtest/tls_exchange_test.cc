// The load tester's DNS-over-TLS connection machine (loadtest/tls_exchange.h) without sockets:
// each test plays the driver between it and a small OpenSSL server over memory (written here,
// sharing nothing with server/tls/), with certificates made at test time. Handshakes full and
// resumed, the share of tickets offered, verification failures, the server's flight delivered
// whole, byte by byte and at every two-way split, failures during the handshake, several
// queries per connection. Every transaction must end exactly once.
#include "loadtest/tls_exchange.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "loadtest/dns_request.h"
#include "tests/unit/loadtest/dns_answer.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::load {
namespace {

using tls::testing::TestPkiDir;

// A DoT server over memory BIOs: TLS 1.3, session tickets, ALPN "dot"; answers every whole
// query (2-byte length prefix, RFC 7858 §3.3) with AnswerTo. One connection at a time.
class MemoryDotServer {
 public:
  explicit MemoryDotServer(const TestPkiDir& pki) {
    ctx_ = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(ctx_, TLS1_3_VERSION);
    EXPECT_EQ(SSL_CTX_use_certificate_chain_file(ctx_, pki.chain_file().c_str()), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx_, pki.key_file().c_str(), SSL_FILETYPE_PEM), 1);
    SSL_CTX_set_alpn_select_cb(
        ctx_,
        [](SSL*, const unsigned char** out, unsigned char* out_length, const unsigned char* in,
           unsigned int in_length, void*) {
          static const unsigned char kDot[] = {3, 'd', 'o', 't'};
          unsigned char* selected = nullptr;
          if (SSL_select_next_proto(&selected, out_length, kDot, sizeof(kDot), in, in_length) !=
              OPENSSL_NPN_NEGOTIATED) {
            return SSL_TLSEXT_ERR_ALERT_FATAL;
          }
          *out = selected;
          return SSL_TLSEXT_ERR_OK;
        },
        nullptr);
  }
  ~MemoryDotServer() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
  }

  void Accept() {
    SSL_free(ssl_);
    ssl_ = SSL_new(ctx_);
    SSL_set_bio(ssl_, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
    SSL_set_accept_state(ssl_);
    plain_.clear();
    answer_id_delta = 0;
    answering = true;
  }
  // The client's bytes in; the server's reply out (handshake flights, answers).
  std::string Feed(absl::string_view bytes) {
    BIO_write(SSL_get_rbio(ssl_), bytes.data(), static_cast<int>(bytes.size()));
    if (!SSL_is_init_finished(ssl_)) SSL_do_handshake(ssl_);
    if (SSL_is_init_finished(ssl_)) {
      char buffer[4096];
      int n;
      while ((n = SSL_read(ssl_, buffer, sizeof(buffer))) > 0) plain_.append(buffer, n);
      while (answering && plain_.size() >= 2) {
        const size_t length =
            2 + ((static_cast<uint8_t>(plain_[0]) << 8) | static_cast<uint8_t>(plain_[1]));
        if (plain_.size() < length) break;
        const std::string answer = AnswerTo(plain_.substr(0, length), answer_id_delta);
        ++queries;
        SSL_write(ssl_, answer.data(), static_cast<int>(answer.size()));
        plain_.erase(0, length);
      }
    }
    ERR_clear_error();
    return TakeOutput();
  }
  std::string Shutdown() {
    SSL_shutdown(ssl_);
    return TakeOutput();
  }
  bool resumed() const { return SSL_session_reused(ssl_) == 1; }

  int queries = 0;
  int answer_id_delta = 0;
  bool answering = true;

 private:
  std::string TakeOutput() {
    BIO* out = SSL_get_wbio(ssl_);
    std::string bytes(BIO_ctrl_pending(out), '\0');
    if (!bytes.empty()) BIO_read(out, bytes.data(), static_cast<int>(bytes.size()));
    return bytes;
  }

  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string plain_;
};

class TlsExchangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = DnsClient::Create({{"www.example.com.", "A"}}, DnsCheckConfig{});
    ASSERT_TRUE(client.ok()) << client.status();
    protocol_ = std::move(*client);
    server_ = std::make_unique<MemoryDotServer>(pki_);
    options_.ca_file = pki_.ca_file();
    options_.sni = "dot.example.test";
  }

  // A fresh client context, ticket store and machine with the current options.
  void MakeClient(int queries = 1) {
    auto context = TlsClientContext::Create(options_);
    ASSERT_TRUE(context.ok()) << context.status();
    context_ = std::move(*context);
    config_.queries_per_conn = queries;
    config_.max_response_bytes = 4096;
    requests_ = std::make_unique<RequestSource>(protocol_.get(), 7);
    tickets_ = std::make_unique<TicketStore>(options_.resume_fraction);
    stats_ = ThreadStats();
    tls_.reset();
    tls_ = std::make_unique<TlsExchange>(context_.get(), tickets_.get(),
                                         Exchange(&config_, requests_.get(), &stats_), &stats_);
  }

  // Begins and connects; returns the ClientHello.
  std::string Connect() {
    server_->Accept();
    tls_->Begin(1000, 1000);
    tls_->OnConnected(0, 2000);
    return TakeSent();
  }
  std::string TakeSent() {
    std::string sent(tls_->unsent());
    tls_->OnSent(sent.size(), 3000);
    return sent;
  }
  // Moves bytes both ways until the client ends or neither side has more to say.
  void Pump(std::string client_bytes) {
    for (int round = 0; round < 20 && tls_->active() && !client_bytes.empty(); ++round) {
      const std::string reply = server_->Feed(client_bytes);
      if (!reply.empty()) tls_->OnReceived(reply, 4000 + round);
      if (!tls_->active()) break;  // what is left is close_notify
      client_bytes = TakeSent();
    }
  }
  // One whole connection; whether it succeeded.
  bool RunOne() {
    Pump(Connect());
    return tls_->succeeded() && !tls_->active();
  }
  void ExpectCountedOnce() { EXPECT_EQ(stats_.started, stats_.ok + stats_.errors_total()); }
  uint64_t Errors(ErrorKind kind) const { return stats_.errors[static_cast<int>(kind)]; }
  std::string Reasons() const {
    std::string text;
    for (const std::string& sample : stats_.samples) text += sample + "; ";
    return text;
  }

  TestPkiDir pki_;
  std::unique_ptr<MemoryDotServer> server_;
  TlsClientOptions options_;
  std::unique_ptr<DnsClient> protocol_;
  std::unique_ptr<TlsClientContext> context_;
  ExchangeConfig config_;
  std::unique_ptr<RequestSource> requests_;
  std::unique_ptr<TicketStore> tickets_;
  ThreadStats stats_;
  std::unique_ptr<TlsExchange> tls_;
};

TEST_F(TlsExchangeTest, FullHandshakeThenTheAnswerThenCloseNotify) {
  MakeClient();
  ASSERT_TRUE(RunOne()) << Reasons();
  EXPECT_EQ(stats_.ok, 1u);
  EXPECT_EQ(stats_.queries_ok, 1u);
  EXPECT_EQ(server_->queries, 1);
  EXPECT_EQ(stats_.tls.started, 1u);
  EXPECT_EQ(stats_.tls.full, 1u);
  EXPECT_EQ(stats_.tls.resumed, 0u);
  EXPECT_EQ(stats_.tls.tls13, 1u);
  EXPECT_EQ(stats_.tls.alpn_dot, 1u);
  EXPECT_EQ(stats_.tls.handshake_latency.count(), 1u);
  EXPECT_EQ(stats_.tls.answer_latency.count(), 1u);
  // close_notify waits for the driver's last send.
  EXPECT_FALSE(tls_->unsent().empty());
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, TheQueryLeavesWithTheClientFinished) {
  MakeClient();
  const std::string flight = server_->Feed(Connect());
  tls_->OnReceived(flight, 4000);
  EXPECT_TRUE(tls_->handshake_done());
  // One send carries the Finished and the query: the server answers from it alone.
  const std::string reply = server_->Feed(TakeSent());
  EXPECT_EQ(server_->queries, 1);
  tls_->OnReceived(reply, 5000);
  EXPECT_TRUE(tls_->succeeded());
}

TEST_F(TlsExchangeTest, ATicketFromAnEarlierConnectionIsResumed) {
  options_.resume_fraction = 1;
  MakeClient();
  ASSERT_TRUE(RunOne()) << Reasons();
  EXPECT_FALSE(tls_->offered_ticket());  // none yet
  const size_t tickets = tickets_->size();
  ASSERT_GT(tickets, 0u);
  ASSERT_TRUE(RunOne()) << Reasons();
  EXPECT_TRUE(tls_->offered_ticket());
  EXPECT_TRUE(server_->resumed());
  EXPECT_EQ(stats_.tls.full, 1u);
  EXPECT_EQ(stats_.tls.resumed, 1u);
  EXPECT_EQ(stats_.tls.resume_offered, 1u);
  EXPECT_EQ(stats_.ok, 2u);
  // One ticket used (each is offered once), at least one more received.
  EXPECT_GE(tickets_->size(), tickets);
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, EachTicketIsOfferedOnce) {
  options_.resume_fraction = 1;
  MakeClient();
  ASSERT_TRUE(RunOne()) << Reasons();
  std::vector<SSL_SESSION*> offered;
  while (SSL_SESSION* ticket = tickets_->NextOffer()) offered.push_back(ticket);
  ASSERT_FALSE(offered.empty());
  for (size_t i = 1; i < offered.size(); ++i) EXPECT_NE(offered[i], offered[0]);
  for (SSL_SESSION* ticket : offered) SSL_SESSION_free(ticket);
  EXPECT_EQ(tickets_->size(), 0u);
  // None left: the next connection is a full handshake, and brings tickets again.
  ASSERT_TRUE(RunOne()) << Reasons();
  EXPECT_FALSE(tls_->offered_ticket());
  EXPECT_EQ(stats_.tls.full, 2u);
  EXPECT_GT(tickets_->size(), 0u);
}

TEST_F(TlsExchangeTest, TheResumeFractionIsTheShareOfTicketsOffered) {
  options_.resume_fraction = 0.3;
  MakeClient();
  ASSERT_TRUE(RunOne()) << Reasons();  // the first ticket
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(RunOne()) << Reasons();
  EXPECT_EQ(stats_.tls.resume_offered, 3u);
  EXPECT_EQ(stats_.tls.resumed, 3u);
  EXPECT_EQ(stats_.tls.full, 8u);
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, NoResumptionUnlessAsked) {
  MakeClient();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(RunOne()) << Reasons();
  EXPECT_EQ(stats_.tls.resume_offered, 0u);
  EXPECT_EQ(stats_.tls.full, 3u);
}

TEST_F(TlsExchangeTest, AnUnknownCaFailsVerification) {
  TestPkiDir other;
  options_.ca_file = other.ca_file();
  MakeClient();
  EXPECT_FALSE(RunOne());
  EXPECT_EQ(Errors(ErrorKind::kTlsVerify), 1u);
  EXPECT_EQ(stats_.tls.failed, 1u);
  EXPECT_EQ(stats_.tls.completed(), 0u);
  EXPECT_EQ(server_->queries, 0);
  EXPECT_NE(Reasons().find("certificate"), std::string::npos) << Reasons();
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, AnotherNameFailsVerification) {
  options_.sni = "other.example.test";
  MakeClient();
  EXPECT_FALSE(RunOne());
  EXPECT_EQ(Errors(ErrorKind::kTlsVerify), 1u);
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, InsecureSkipsVerification) {
  TestPkiDir other;
  options_.ca_file = other.ca_file();
  options_.insecure = true;
  options_.sni = "other.example.test";
  MakeClient();
  EXPECT_TRUE(RunOne()) << Reasons();
}

TEST_F(TlsExchangeTest, VerificationIsTheDefault) {
  options_.ca_file.clear();
  EXPECT_FALSE(TlsClientContext::Create(options_).ok());
  options_.ca_file = pki_.dir() + "/missing.pem";
  EXPECT_FALSE(TlsClientContext::Create(options_).ok());
  options_.ca_file = pki_.ca_file();
  options_.resume_fraction = 1.5;
  EXPECT_FALSE(TlsClientContext::Create(options_).ok());
}

TEST_F(TlsExchangeTest, TheServerFlightAtEverySplitGivesTheSameOutcome) {
  MakeClient();
  const std::string flight = server_->Feed(Connect());
  ASSERT_GT(flight.size(), 100u);
  // cut 0: byte by byte; else two pieces.
  for (size_t cut = 0; cut < flight.size(); cut += (cut < 64 || flight.size() - cut < 64) ? 1 : 7) {
    MakeClient();
    // A new handshake per cut: the server's flight differs each time, so cut it afresh.
    const std::string flight_now = server_->Feed(Connect());
    const size_t at = std::min(cut, flight_now.size() - 1);
    if (cut == 0) {
      for (char byte : flight_now) tls_->OnReceived(std::string(1, byte), 4000);
    } else {
      tls_->OnReceived(flight_now.substr(0, at), 4000);
      EXPECT_FALSE(tls_->handshake_done()) << "cut " << at;
      tls_->OnReceived(flight_now.substr(at), 4001);
    }
    ASSERT_TRUE(tls_->handshake_done()) << "cut " << at << ": " << Reasons();
    Pump(TakeSent());
    EXPECT_TRUE(tls_->succeeded()) << "cut " << at << ": " << Reasons();
    ExpectCountedOnce();
  }
}

TEST_F(TlsExchangeTest, TheAnswerByteByByte) {
  MakeClient();
  tls_->OnReceived(server_->Feed(Connect()), 4000);
  const std::string answer = server_->Feed(TakeSent());
  for (size_t i = 0; i + 1 < answer.size(); ++i) {
    tls_->OnReceived(answer.substr(i, 1), 5000);
    ASSERT_TRUE(tls_->active()) << i;
  }
  tls_->OnReceived(answer.substr(answer.size() - 1), 5000);
  EXPECT_TRUE(tls_->succeeded()) << Reasons();
}

TEST_F(TlsExchangeTest, AServerThatClosesDuringTheHandshakeIsAHandshakeFailure) {
  MakeClient();
  Connect();
  tls_->OnPeerClosed(3000);
  EXPECT_FALSE(tls_->active());
  EXPECT_EQ(Errors(ErrorKind::kTlsHandshake), 1u);
  EXPECT_EQ(stats_.tls.failed, 1u);
  EXPECT_TRUE(tls_->unsent().empty());  // no close_notify after a failure
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, GarbageInsteadOfAServerHelloIsAHandshakeFailure) {
  MakeClient();
  Connect();
  tls_->OnReceived(std::string("\x00\x1c\x12\x34\x81\x80\x00\x01", 8) + std::string(40, 'x'), 3000);
  EXPECT_FALSE(tls_->active());
  EXPECT_EQ(Errors(ErrorKind::kTlsHandshake), 1u);
  EXPECT_EQ(stats_.tls.failed, 1u);
  EXPECT_FALSE(stats_.reasons.empty());
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, TimeoutAndResetDuringTheHandshakeCountAsFailedHandshakes) {
  MakeClient();
  Connect();
  tls_->OnTimeout(5000);
  EXPECT_EQ(Errors(ErrorKind::kTimeout), 1u);
  Connect();
  tls_->OnError(ECONNRESET, 5000);
  EXPECT_EQ(Errors(ErrorKind::kReset), 1u);
  EXPECT_EQ(stats_.tls.failed, 2u);
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, ARefusedConnectIsNoHandshake) {
  MakeClient();
  tls_->Begin(1000, 1000);
  tls_->OnConnected(ECONNREFUSED, 2000);
  EXPECT_FALSE(tls_->active());
  EXPECT_EQ(Errors(ErrorKind::kRefused), 1u);
  EXPECT_EQ(stats_.tls.started, 0u);
  EXPECT_EQ(stats_.tls.failed, 0u);
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, AWrongAnswerInsideTlsIsWrong) {
  MakeClient();
  server_->Accept();
  server_->answer_id_delta = 1;
  tls_->Begin(1000, 1000);
  tls_->OnConnected(0, 2000);
  Pump(TakeSent());
  EXPECT_EQ(Errors(ErrorKind::kWrong), 1u);
  EXPECT_EQ(stats_.tls.full, 1u);  // the handshake itself was good
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, CloseNotifyBeforeTheAnswerIsShort) {
  MakeClient();
  tls_->OnReceived(server_->Feed(Connect()), 4000);
  ASSERT_TRUE(tls_->handshake_done());
  server_->answering = false;
  tls_->OnReceived(server_->Feed(TakeSent()), 5000);  // the server's tickets, no answer
  ASSERT_TRUE(tls_->active());
  tls_->OnReceived(server_->Shutdown(), 6000);
  EXPECT_EQ(Errors(ErrorKind::kShort), 1u);
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, GarbageAfterTheHandshakeIsATlsError) {
  MakeClient();
  tls_->OnReceived(server_->Feed(Connect()), 4000);
  ASSERT_TRUE(tls_->handshake_done());
  tls_->OnReceived(std::string("\x17\x03\x03\x00\x20", 5) + std::string(32, 'z'), 5000);
  EXPECT_EQ(Errors(ErrorKind::kTlsError), 1u);
  EXPECT_EQ(stats_.tls.failed, 0u);
  ExpectCountedOnce();
}

TEST_F(TlsExchangeTest, SeveralQueriesOnOneConnection) {
  MakeClient(/*queries=*/3);
  ASSERT_TRUE(RunOne()) << Reasons();
  EXPECT_EQ(server_->queries, 3);
  EXPECT_EQ(stats_.queries_ok, 3u);
  EXPECT_EQ(stats_.ok, 1u);
  EXPECT_EQ(stats_.tls.full, 1u);
  ExpectCountedOnce();
}

}  // namespace
}  // namespace onepass::load
