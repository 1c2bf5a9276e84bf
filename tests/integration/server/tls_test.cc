// --tls-listen in-process, on each I/O driver: the TLS layer between the socket and the test
// line protocol (tests/support/line_handler.h), driven by OpenSSL's client over real loopback
// TCP. What DNS over TLS relies on: one exchange per connection with the answer and
// close_notify in one send, resumption from a ticket, a ClientHello in pieces, plain bytes on
// the TLS port refused and counted, big answers through a full socket, the handshake bounded
// by the read timeout, and a reload of the certificate without dropping a connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/scoped_fd.h"
#include "gtest/gtest.h"
#include "openssl/ssl.h"
#include "server/drivers/uring/uring_driver.h"
#include "server/server.h"
#include "server/tls/tls_config.h"
#include "server/tls/tls_server_context.h"
#include "tests/support/in_process_server.h"
#include "tests/support/tcp_client.h"
#include "tests/support/wait_for.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass {
namespace {

using testing::TcpClient;
using tls::testing::ClientOptions;
using tls::testing::TestPkiDir;
using tls::testing::TestTlsClient;

// The default engine unless ONEPASS_TLS_ENGINE names another (scripts/test.sh runs this test
// again with "openssl").
std::shared_ptr<const tls::TlsServerContext> MakeContext(const TestPkiDir& pki) {
  tls::TlsConfig config;
  if (const char* engine = std::getenv("ONEPASS_TLS_ENGINE"); engine != nullptr && *engine) {
    config.engine = engine;
  }
  config.cert_file = pki.chain_file();
  config.key_file = pki.key_file();
  absl::StatusOr<std::shared_ptr<const tls::TlsServerContext>> context =
      tls::TlsServerContext::Create(config, absl::Now());
  EXPECT_TRUE(context.ok()) << context.status();
  return context.ok() ? *context : nullptr;
}

// A blocking TCP connection to 127.0.0.1:`port` with TCP_NODELAY; `receive_buffer` > 0 sets
// SO_RCVBUF before connect (after it, the window could not shrink cleanly).
absl::StatusOr<ScopedFd> ConnectTcp(int port, int receive_buffer, const char* source = nullptr) {
  ScopedFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  const int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (receive_buffer > 0) {
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof(receive_buffer));
  }
  if (source != nullptr) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&from), sizeof(from)) != 0) {
      return absl::InternalError(absl::StrCat("bind ", source, ": ", std::strerror(errno)));
    }
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return absl::InternalError(absl::StrCat("connect: ", std::strerror(errno)));
  }
  return fd;
}

// What one TLS connection got.
struct DotResult {
  bool handshake = false;  // completed
  bool resumed = false;
  std::string plaintext;      // the server's application data
  bool close_notify = false;  // it ended with close_notify
  bool eof = false;           // then the TCP connection ended
  std::string error;          // what went wrong on the client's side, if anything
};

// One connection: the handshake, `request` once it is done (or with `early_request` never),
// then everything the server sends until it closes (10 s at most). `chunk` > 0 sends the
// client's bytes in pieces of that size, each its own send (TCP_NODELAY), so the server gets
// records in pieces. `receive_buffer` > 0 shrinks the client's socket receive buffer, so a big
// answer fills the server's socket and its sends come back partial.
// `source`: the client's address (127.0.0.1 when null), for a second client prefix.
// `next`: sent on the same connection once the first answer line has come (keepalive).
DotResult Exchange(int port, const std::string& request, const ClientOptions& options,
                   size_t chunk = 0, SSL_SESSION** session_out = nullptr, int receive_buffer = 0,
                   const char* source = nullptr, const std::string& next = "") {
  DotResult result;
  absl::StatusOr<ScopedFd> tcp = ConnectTcp(port, receive_buffer, source);
  if (!tcp.ok()) {
    result.error = tcp.status().ToString();
    return result;
  }
  const int fd = tcp->get();
  TestTlsClient client(options);
  bool sent_request = false;
  bool sent_next = false;
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (absl::Now() < give_up) {
    if (!result.handshake && client.Step()) {
      result.handshake = true;
      result.resumed = SSL_session_reused(client.ssl()) == 1;
    }
    if (result.handshake && !sent_request) {
      client.Write(request);
      sent_request = true;
    }
    if (!next.empty() && result.plaintext.find('\n') != std::string::npos && !sent_next) {
      client.Write(next);
      sent_next = true;
    }
    const std::string out = client.TakeOutput();
    for (size_t at = 0; at < out.size();) {
      const size_t n = chunk == 0 ? out.size() - at : std::min(chunk, out.size() - at);
      const ssize_t sent = send(fd, out.data() + at, n, MSG_NOSIGNAL);
      if (sent <= 0) {
        result.error = absl::StrCat("send: ", std::strerror(errno));
        return result;
      }
      at += static_cast<size_t>(sent);
    }
    if (client.failed()) {
      result.error = "the client's TLS failed";
      return result;
    }
    pollfd ready = {fd, POLLIN, 0};
    const int64_t wait_ms = absl::ToInt64Milliseconds(give_up - absl::Now());
    if (poll(&ready, 1, static_cast<int>(std::max<int64_t>(wait_ms, 0))) <= 0) continue;
    char buffer[65536];
    const ssize_t got = recv(fd, buffer, sizeof(buffer), 0);
    if (got == 0) {
      result.eof = true;
      break;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      result.error = absl::StrCat("recv: ", std::strerror(errno));
      break;
    }
    client.GiveInput({buffer, static_cast<size_t>(got)});
    if (result.handshake || client.Step()) {
      if (!result.handshake) {
        result.handshake = true;
        result.resumed = SSL_session_reused(client.ssl()) == 1;
      }
      bool closed = false;
      result.plaintext += client.Read(&closed);
      result.close_notify = result.close_notify || closed;
    }
  }
  if (session_out != nullptr) *session_out = client.TakeSession();
  return result;
}

// A one-shot client, as a probe is: the handshake, `request`, its answer line, then it waits
// `linger` for the server's close_notify and EOF and hangs up (TCP close) either way. Returns
// whether the server closed after the answer; "" in `error` when all went well.
bool ServerClosedAfterOneAnswer(int port, const std::string& request, const ClientOptions& options,
                                const char* source, absl::Duration linger, std::string& error) {
  absl::StatusOr<ScopedFd> tcp = ConnectTcp(port, 0, source);
  if (!tcp.ok()) {
    error = tcp.status().ToString();
    return false;
  }
  TestTlsClient client(options);
  bool handshake = false;
  bool sent = false;
  bool closed = false;
  std::string plaintext;
  absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (absl::Now() < give_up && !closed) {
    if (!handshake) handshake = client.Step();
    if (handshake && !sent) {
      client.Write(request);
      sent = true;
    }
    const std::string out = client.TakeOutput();
    if (!out.empty() && send(tcp->get(), out.data(), out.size(), MSG_NOSIGNAL) <= 0) break;
    if (client.failed()) {
      error = "the client's TLS failed";
      return false;
    }
    pollfd ready = {tcp->get(), POLLIN, 0};
    if (poll(&ready, 1, 20) <= 0) continue;
    char buffer[65536];
    const ssize_t got = recv(tcp->get(), buffer, sizeof(buffer), 0);
    if (got <= 0) {
      closed = true;
      break;
    }
    client.GiveInput({buffer, static_cast<size_t>(got)});
    if (!handshake) handshake = client.Step();
    if (handshake) {
      const bool had_answer = plaintext.find('\n') != std::string::npos;
      bool notify = false;
      plaintext += client.Read(&notify);
      closed = closed || notify;
      if (!had_answer && plaintext.find('\n') != std::string::npos) give_up = absl::Now() + linger;
    }
  }
  if (plaintext.find('\n') == std::string::npos) error = "no answer";
  return closed;
}

class TlsServerTest : public testing::InProcessLineServerTest,
                      public ::testing::WithParamInterface<IoLoop> {
 protected:
  TlsServerTest() {
    config_.io = GetParam();
    config_.workers = 1;  // answers name their worker: always 0
    config_.tls_listen = {"127.0.0.1:0"};
    tls_ = MakeContext(pki_);
    // One query per connection unless a test asks for more (the default keeps them: below).
    config_.tls_idle_timeout = absl::ZeroDuration();
    options_.ca_file = pki_.ca_file();
  }
  void Start(const testing::LineProtocolOptions& line = {}) {
    StartServer(line);
    ASSERT_EQ(server_->tls_addresses().size(), 1u);
    tls_port_ = server_->tls_addresses()[0].port();
  }
  bool WaitForTls(const std::function<bool(const tls::TlsStatsSnapshot&)>& done) {
    for (int i = 0; i < 500; ++i) {
      if (done(server_->TlsStats())) return true;
      usleep(10 * 1000);
    }
    ADD_FAILURE() << "TLS stats never matched: " << server_->TlsStats().Format();
    return false;
  }

  TestPkiDir pki_;
  ClientOptions options_;
  int tls_port_ = 0;
};

TEST_P(TlsServerTest, OneRequestPerConnectionAnswersWithCloseNotifyAndCloses) {
  Start();
  constexpr int kConnections = 20;
  for (int i = 0; i < kConnections; ++i) {
    const DotResult got = Exchange(tls_port_, absl::StrCat("hello ", i, "\n"), options_);
    ASSERT_TRUE(got.error.empty()) << got.error;
    EXPECT_TRUE(got.handshake);
    EXPECT_EQ(got.plaintext, absl::StrCat("worker=0 hello ", i, "\n"));
    EXPECT_TRUE(got.close_notify);
    EXPECT_TRUE(got.eof);
  }
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.served == kConnections; }));
  const StatsSnapshot stats = server_->Stats();
  // Per connection: the server's flight, then the ticket, the answer and close_notify in one
  // send (the answer never leaves apart from its close_notify).
  EXPECT_EQ(stats.sends, 2u * kConnections) << stats.Format();
  EXPECT_EQ(stats.responses, kConnections);
  EXPECT_EQ(stats.errors, 0u);
  const tls::TlsStatsSnapshot tls = server_->TlsStats();
  EXPECT_EQ(tls.handshakes_full, kConnections);
  EXPECT_EQ(tls.tls13, kConnections);
  EXPECT_EQ(tls.alpn_selected, kConnections);
  EXPECT_EQ(tls.failed_total(), 0u);
  // The plain listener still serves plain TCP.
  absl::StatusOr<TcpClient> plain = Connect();
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(plain->Send("plain\n").ok());
  EXPECT_EQ(*plain->ReadUntilClose(), "worker=0 plain\n");
}

TEST_P(TlsServerTest, TicketFromOneConnectionResumesTheNext) {
  Start();
  SSL_SESSION* session = nullptr;
  const DotResult first = Exchange(tls_port_, "one\n", options_, 0, &session);
  ASSERT_TRUE(first.error.empty()) << first.error;
  ASSERT_NE(session, nullptr);
  // Each ticket used once (RFC 8446 §C.4): a resumed connection gets a fresh one, which
  // resumes the next.
  for (int i = 0; i < 3; ++i) {
    ClientOptions resume = options_;
    resume.session = session;
    SSL_SESSION* next = nullptr;
    const DotResult again = Exchange(tls_port_, "two\n", resume, 0, &next);
    SSL_SESSION_free(session);
    session = next;
    ASSERT_TRUE(again.error.empty()) << again.error;
    EXPECT_TRUE(again.resumed) << "resumption " << i;
    EXPECT_EQ(again.plaintext, "worker=0 two\n");
    ASSERT_NE(session, nullptr);
  }
  SSL_SESSION_free(session);
  ASSERT_TRUE(WaitForTls([](const tls::TlsStatsSnapshot& s) {
    return s.handshakes_full == 1 && s.handshakes_resumed == 3;
  }));
}

TEST_P(TlsServerTest, ClientHelloAndRequestInSmallPiecesAreServed) {
  Start();
  for (size_t chunk : {1u, 7u, 100u}) {
    const DotResult got = Exchange(tls_port_, "pieces\n", options_, chunk);
    ASSERT_TRUE(got.error.empty()) << "chunk " << chunk << ": " << got.error;
    EXPECT_EQ(got.plaintext, "worker=0 pieces\n") << "chunk " << chunk;
    EXPECT_TRUE(got.close_notify);
  }
  EXPECT_EQ(server_->TlsStats().failed_total(), 0u);
}

TEST_P(TlsServerTest, PlainBytesOnTheTlsPortAreClosedAndCounted) {
  Start();
  absl::StatusOr<TcpClient> client = TcpClient::Connect("127.0.0.1", tls_port_);
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE(client->Send("hello\n").ok());
  absl::StatusOr<std::string> reply = client->ReadUntilClose();
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "");  // no alert a plain client could not read
  ASSERT_TRUE(WaitForTls([](const tls::TlsStatsSnapshot& s) {
    return s.failed[static_cast<int>(tls::TlsFailure::k_not_tls) - 1] == 1;
  }));
  EXPECT_EQ(server_->Stats().served, 0u);
}

TEST_P(TlsServerTest, BigAnswerCrossesAFullSocketWhole) {
  testing::LineProtocolOptions line;
  line.output_bytes = 1 << 20;
  Start(line);
  constexpr size_t kBytes = 600 * 1024;  // several records, more than a socket buffer
  const DotResult got = Exchange(tls_port_, absl::StrCat("big ", kBytes, "\n"), options_, 0,
                                 nullptr, /*receive_buffer=*/4096);
  ASSERT_TRUE(got.error.empty()) << got.error << " after " << got.plaintext.size() << " bytes; "
                                 << server_->Stats().Format();
  ASSERT_EQ(got.plaintext.size(), kBytes + 1);
  EXPECT_EQ(got.plaintext.find_first_not_of('x'), kBytes);
  EXPECT_TRUE(got.close_notify);
  // The socket filled: the connection waited to write, and went on where it stopped.
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.served == 1; }));
  EXPECT_GE(server_->Stats().parked, 1u) << server_->Stats().Format();
}

TEST_P(TlsServerTest, HandshakeThatStallsIsCutAtTheReadTimeout) {
  config_.read_timeout = absl::Milliseconds(300);
  Start();
  TestTlsClient client(options_);
  client.Step();
  const std::string hello = client.TakeOutput();
  absl::StatusOr<TcpClient> tcp = TcpClient::Connect("127.0.0.1", tls_port_);
  ASSERT_TRUE(tcp.ok());
  ASSERT_TRUE(tcp->Send(hello.substr(0, hello.size() / 2)).ok());  // and then nothing
  absl::StatusOr<std::string> rest = tcp->ReadUntilClose(absl::Seconds(10));
  ASSERT_TRUE(rest.ok()) << rest.status();
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.read_timeouts == 1; }));
  EXPECT_EQ(server_->TlsStats().handshakes_full, 0u);
}

TEST_P(TlsServerTest, ReloadServesTheNewCertificateToNewConnectionsOnly) {
  Start();
  TestPkiDir other({.common_name = "renewed.example.test"});
  server_->ReloadTls(MakeContext(other));
  ClientOptions renewed = options_;
  renewed.ca_file = other.ca_file();
  // The worker takes the new context at its next event: a connection or two may still get the
  // old one, never a failure.
  bool served_renewed = false;
  for (int i = 0; i < 50 && !served_renewed; ++i) {
    const DotResult got = Exchange(tls_port_, "after\n", renewed);
    if (got.error.empty()) {
      EXPECT_EQ(got.plaintext, "worker=0 after\n");
      served_renewed = true;
    }
  }
  EXPECT_TRUE(served_renewed);
  // The old CA no longer verifies what new connections get.
  const DotResult old = Exchange(tls_port_, "old\n", options_);
  EXPECT_FALSE(old.error.empty());
}

TEST_P(TlsServerTest, FloodOfFullHandshakesFromOnePrefixIsHeldToItsRate) {
  config_.tls_full_per_client = 5;  // one worker: the whole budget is its
  Start();
  int served = 0;
  int refused = 0;
  for (int i = 0; i < 30; ++i) {
    const DotResult got = Exchange(tls_port_, "flood\n", options_);
    (got.error.empty() && got.plaintext == "worker=0 flood\n" ? served : refused)++;
  }
  // A second's worth at once, then about five a second: far fewer than 30 in this loop.
  EXPECT_GE(served, 5);
  EXPECT_LT(served, 25);
  EXPECT_GT(refused, 0);
  ASSERT_TRUE(WaitForTls([&](const tls::TlsStatsSnapshot& s) {
    return s.failed[static_cast<int>(tls::TlsFailure::k_limit) - 1] ==
           static_cast<uint64_t>(refused);
  }));
  // Another prefix is served at once, however the flooding one fares.
  const DotResult other = Exchange(tls_port_, "other\n", options_, 0, nullptr, 0, "127.0.0.2");
  ASSERT_TRUE(other.error.empty()) << other.error;
  EXPECT_EQ(other.plaintext, "worker=0 other\n");
  // A resumption is priced apart: the flooding prefix still resumes.
  SSL_SESSION* session = nullptr;
  Exchange(tls_port_, "ticket\n", options_, 0, &session, 0, "127.0.0.3");
  ASSERT_NE(session, nullptr);
  ClientOptions resume = options_;
  resume.session = session;
  const DotResult resumed = Exchange(tls_port_, "resumed\n", resume);
  SSL_SESSION_free(session);
  ASSERT_TRUE(resumed.error.empty()) << resumed.error;
  EXPECT_TRUE(resumed.resumed);
}

// A connection that sent its ClientHello (no cryptography on its side) and never its
// Finished, from `source`: it holds a handshake slot while the server waits for it.
struct StalledHandshake {
  StalledHandshake(int port, const ClientOptions& options, const char* source) : client(options) {
    client.Step();
    absl::StatusOr<ScopedFd> connected = ConnectTcp(port, 0, source);
    if (!connected.ok()) return;
    tcp = *std::move(connected);
    const std::string hello = client.TakeOutput();
    sent = send(tcp.get(), hello.data(), hello.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(hello.size());
  }
  // The server closed it (EOF or reset), seen within `bound`.
  bool ClosedByServer(absl::Duration bound) {
    return ::onepass::testing::WaitFor(
        [&] {
          char byte[4096];
          const ssize_t n = recv(tcp.get(), byte, sizeof(byte), MSG_DONTWAIT);
          if (n > 0) received += static_cast<size_t>(n);
          return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
        },
        bound);
  }
  TestTlsClient client;
  ScopedFd tcp;
  bool sent = false;
  size_t received = 0;  // bytes of the server's seen by ClosedByServer
};

int TlsFailures(const tls::TlsStatsSnapshot& s, tls::TlsFailure failure) {
  return static_cast<int>(s.failed[static_cast<int>(failure) - 1]);
}

// Issue 37: after a reload the previous certificate's private key is freed once the last
// connection that began with it ends, not kept by every worker's copy of the configuration.
TEST_P(TlsServerTest, AReloadFreesThePreviousContextWhenItsLastConnectionEnds) {
  std::weak_ptr<const tls::TlsServerContext> first = tls_;
  Start();
  tls_.reset();  // the test's own copy
  ASSERT_TRUE(Exchange(tls_port_, "before\n", options_).error.empty());
  // A handshake in progress under the first context holds it.
  auto stalled = std::make_unique<StalledHandshake>(tls_port_, options_, "127.0.0.2");
  ASSERT_TRUE(stalled->sent);
  // "before" parked for its Finished too: two in all.
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 2; }));
  server_->ReloadTls(MakeContext(pki_));
  const DotResult after = Exchange(tls_port_, "after\n", options_);
  ASSERT_TRUE(after.error.empty()) << after.error;
  EXPECT_FALSE(first.expired()) << "freed under a connection still using it";
  stalled.reset();  // its client goes: the server closes it
  EXPECT_TRUE(::onepass::testing::WaitFor([&] { return first.expired(); }, absl::Seconds(5)))
      << "the previous context (and its key) is still held";
}

// Issue 37: a TLS client's connections are counted at accept, before any TLS work (they used
// to be counted at park, after the server's flight and its signature), against a limit of
// the TLS listeners' own: plain TCP's does not apply to them.
TEST_P(TlsServerTest, APrefixAtItsConnectionLimitIsRefusedBeforeTheServersFlight) {
  config_.max_connections_per_client = 1;  // plain TCP's: not what counts here
  config_.tls_max_connections_per_client = 2;
  config_.read_timeout = absl::Seconds(5);
  Start();
  StalledHandshake first(tls_port_, options_, "127.0.0.2");
  StalledHandshake second(tls_port_, options_, "127.0.0.2");
  ASSERT_TRUE(first.sent && second.sent);
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 2; }));
  StalledHandshake third(tls_port_, options_, "127.0.0.2");
  EXPECT_TRUE(third.ClosedByServer(absl::Seconds(2)));
  EXPECT_EQ(third.received, 0u) << "the server answered the hello before refusing";
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.rejected_per_client == 1; }));
  const DotResult other = Exchange(tls_port_, "other\n", options_, 0, nullptr, 0, "127.0.0.3");
  ASSERT_TRUE(other.error.empty()) << other.error;
  EXPECT_EQ(other.plaintext, "worker=0 other\n");
}

// The handshake room is full of a stalled client's handshake: a new client makes room from
// the one that has waited longest and is served (issue "Hostile clients, round four": the
// newest used to be refused, so stalled clients kept everyone out).
TEST_P(TlsServerTest, AFullHandshakeRoomMakesSpaceFromTheOldestWaiting) {
  config_.tls_max_handshakes = 1;
  config_.read_timeout = absl::Milliseconds(5000);  // no timeout frees the slot meanwhile
  Start();
  StalledHandshake stalled(tls_port_, options_, "127.0.0.2");
  ASSERT_TRUE(stalled.sent);
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 1; }));
  const DotResult served = Exchange(tls_port_, "served\n", options_);
  ASSERT_TRUE(served.error.empty()) << served.error;
  EXPECT_EQ(served.plaintext, "worker=0 served\n");
  EXPECT_TRUE(stalled.ClosedByServer(absl::Seconds(2)));
  ASSERT_TRUE(WaitForTls([](const tls::TlsStatsSnapshot& s) {
    return TlsFailures(s, tls::TlsFailure::k_evicted) == 1;
  }));
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.rejected_tls_handshakes == 0; }));
}

// One prefix holds at most its share of the handshakes in progress: its next ClientHello is
// refused before any key exchange (handshake_failure, counted "limit"), while another prefix
// is served; the share frees at the handshake's read timeout.
TEST_P(TlsServerTest, APrefixHoldsAtMostItsShareOfTheHandshakesAndTheTimeoutFreesIt) {
  config_.tls_max_handshakes = 100;
  config_.tls_handshakes_per_client = 2;
  config_.read_timeout = absl::Milliseconds(500);
  Start();
  StalledHandshake first(tls_port_, options_, "127.0.0.2");
  StalledHandshake second(tls_port_, options_, "127.0.0.2");
  ASSERT_TRUE(first.sent && second.sent);
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.parked == 2; }));
  const DotResult refused = Exchange(tls_port_, "refused\n", options_, 0, nullptr, 0, "127.0.0.2");
  EXPECT_FALSE(refused.error.empty());
  EXPECT_TRUE(refused.plaintext.empty());
  ASSERT_TRUE(WaitForTls([](const tls::TlsStatsSnapshot& s) {
    return TlsFailures(s, tls::TlsFailure::k_limit) == 1;
  }));
  const DotResult other = Exchange(tls_port_, "other\n", options_, 0, nullptr, 0, "127.0.0.3");
  ASSERT_TRUE(other.error.empty()) << other.error;
  // Their read timeout frees the prefix's share: it is served again.
  ASSERT_TRUE(WaitForTls([](const tls::TlsStatsSnapshot& s) {
    return TlsFailures(s, tls::TlsFailure::k_timeout) == 2;
  }));
  const DotResult after = Exchange(tls_port_, "after\n", options_, 0, nullptr, 0, "127.0.0.2");
  ASSERT_TRUE(after.error.empty()) << after.error;
  EXPECT_EQ(after.plaintext, "worker=0 after\n");
}

// The attack of the issue, scaled to this test's room: stalled ClientHellos from many
// addresses, each at its share, more than the room holds. A good client on another address
// completes every handshake it tries, while the attack goes on.
TEST_P(TlsServerTest, StalledHandshakesFromManyAddressesCannotKeepAGoodClientOut) {
  config_.tls_max_handshakes = 40;
  config_.tls_handshakes_per_client = 4;
  config_.tls_full_per_client = 0;  // the rate limit is not what is under test
  config_.read_timeout = absl::Milliseconds(10000);
  Start();
  std::vector<std::unique_ptr<StalledHandshake>> attack;
  std::vector<std::string> sources;
  for (int a = 0; a < 20; ++a) sources.push_back(absl::StrCat("127.0.1.", a + 1));
  int good = 0;
  for (int round = 0; round < 5; ++round) {
    for (const std::string& source : sources) {
      for (int i = 0; i < 4; ++i) {
        attack.push_back(std::make_unique<StalledHandshake>(tls_port_, options_, source.c_str()));
      }
    }
    const DotResult got = Exchange(tls_port_, "good\n", options_, 0, nullptr, 0, "127.0.0.9");
    if (got.error.empty() && got.plaintext == "worker=0 good\n") ++good;
  }
  EXPECT_EQ(good, 5);
  ASSERT_TRUE(WaitForTls([](const tls::TlsStatsSnapshot& s) {
    return TlsFailures(s, tls::TlsFailure::k_evicted) > 0;
  }));
}

// The default keeps a DoT connection for the client's next query (RFC 7858 §3.4), and a
// client prefix whose connections all end after one query (a probe) is learnt: its answers
// then leave with close_notify and the close, as with --tls-idle-timeout-ms 0.
TEST_P(TlsServerTest, TheDefaultKeepsConnectionsAndLearnsOneShotClients) {
  config_.tls_idle_timeout = kDefaultTlsIdleTimeout;
  Start();
  const DotResult kept =
      Exchange(tls_port_, "first\n", options_, 0, nullptr, 0, "127.0.0.5", "second\n");
  ASSERT_TRUE(kept.error.empty()) << kept.error;
  EXPECT_EQ(kept.plaintext, "worker=0 first\nworker=0 second\n");
  // A one-shot client: after enough connections of one query each, the server closes after
  // the answer.
  bool learnt = false;
  for (int i = 0; i < 40 && !learnt; ++i) {
    std::string error;
    learnt = ServerClosedAfterOneAnswer(tls_port_, "once\n", options_, "127.0.0.6",
                                        absl::Milliseconds(100), error);
    ASSERT_TRUE(error.empty()) << error;
  }
  EXPECT_TRUE(learnt);
  EXPECT_GT(server_->Stats().keepalive_skipped, 0u);
}

TEST_P(TlsServerTest, IdleTimeoutKeepsTheConnectionForTheNextQueryThenSaysCloseNotify) {
  config_.tls_idle_timeout = absl::Milliseconds(300);
  Start();
  const DotResult got =
      Exchange(tls_port_, "first\n", options_, 0, nullptr, 0, nullptr, "second\n");
  ASSERT_TRUE(got.error.empty()) << got.error;
  EXPECT_EQ(got.plaintext, "worker=0 first\nworker=0 second\n");
  // Closed by the idle timeout, with close_notify.
  EXPECT_TRUE(got.close_notify);
  EXPECT_TRUE(got.eof);
  ASSERT_TRUE(WaitForStats([](const StatsSnapshot& s) { return s.idle_closes == 1; }));
  EXPECT_EQ(server_->TlsStats().handshakes_full, 1u);
}

// ALPN names of `bytes` in all, then "dot": a ClientHello of about that size.
ClientOptions BigHello(const ClientOptions& base, size_t bytes) {
  ClientOptions options = base;
  options.alpn.clear();
  for (size_t i = 0; options.alpn.size() * 17 < bytes; ++i) {
    options.alpn.push_back(absl::StrCat("padding-", 10000000 + i));
  }
  options.alpn.push_back("dot");
  return options;
}

TEST_P(TlsServerTest, ClientHelloOf16KbIsServedOneOver32KbRefused) {
  Start();
  // 16 KB: more than one TLS record (2^14 bytes), within --max_handshake_bytes' 32 KiB.
  const DotResult big = Exchange(tls_port_, "big hello\n", BigHello(options_, 16 * 1024), 1000);
  ASSERT_TRUE(big.error.empty()) << big.error;
  EXPECT_EQ(big.plaintext, "worker=0 big hello\n");
  // 40 KB of handshake before any answer: refused, counted, and the next client is served.
  const DotResult huge = Exchange(tls_port_, "huge\n", BigHello(options_, 40 * 1024));
  EXPECT_TRUE(huge.plaintext.empty());
  ASSERT_TRUE(WaitForTls([](const tls::TlsStatsSnapshot& s) {
    return s.failed[static_cast<int>(tls::TlsFailure::k_handshake_too_large) - 1] == 1;
  }));
  const DotResult after = Exchange(tls_port_, "after\n", options_);
  EXPECT_EQ(after.plaintext, "worker=0 after\n");
}

std::vector<IoLoop> Drivers() {
  std::vector<IoLoop> drivers = {IoLoop::kEpoll};
  if (UringDriverBuilt() && ProbeUring().ok()) drivers.push_back(IoLoop::kUring);
  return drivers;
}

INSTANTIATE_TEST_SUITE_P(Drivers, TlsServerTest, ::testing::ValuesIn(Drivers()),
                         [](const ::testing::TestParamInfo<IoLoop>& info) {
                           return info.param == IoLoop::kUring ? "uring" : "epoll";
                         });

}  // namespace
}  // namespace onepass
