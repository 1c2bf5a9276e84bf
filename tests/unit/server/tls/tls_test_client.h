// A real TLS client (OpenSSL's, over memory BIOs) to drive a TlsSession in tests, the fuzzer's
// seeds and the handshake benchmark: the bytes it sends are what kdig or a resolver would
// send, not hand-made records.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_CLIENT_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_CLIENT_H_

#include <openssl/ssl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/tls/tls_session.h"

namespace onepass::tls::testing {

struct ClientOptions {
  std::vector<std::string> alpn = {"dot"};  // empty: the ClientHello offers no ALPN
  int min_version = TLS1_2_VERSION;
  int max_version = TLS1_3_VERSION;
  std::string ca_file;             // verify the server's chain against it when set
  SSL_SESSION* session = nullptr;  // offer this session's ticket (not taken over)
  std::string ciphersuites;        // TLS 1.3 suites offered, in order; empty: OpenSSL's own
};

class TestTlsClient {
 public:
  explicit TestTlsClient(const ClientOptions& options = {});
  ~TestTlsClient();
  TestTlsClient(const TestTlsClient&) = delete;
  TestTlsClient& operator=(const TestTlsClient&) = delete;

  // Runs the client's handshake as far as the bytes it has allow; true once it is complete.
  bool Step();
  // What the client has sent since the last call.
  std::string TakeOutput();
  // Bytes from the server.
  void GiveInput(absl::string_view bytes);
  void GiveInput(absl::Span<const uint8_t> bytes) {
    GiveInput(absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  // Application data to send (after the handshake).
  void Write(absl::string_view plaintext);
  // All application data readable now; `closed` set when close_notify came after it.
  std::string Read(bool* closed = nullptr);
  // The session to resume later (SSL_get1_session); the caller frees it. After a Read, so the
  // server's NewSessionTicket was processed.
  SSL_SESSION* TakeSession() { return SSL_get1_session(ssl_); }
  bool failed() const { return failed_; }
  SSL* ssl() { return ssl_; }

 private:
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;   // server -> client
  BIO* out_ = nullptr;  // client -> server
  bool failed_ = false;
};

// Moves bytes both ways until neither side has anything more to say: the handshake is done,
// or failed. Server plaintext is appended to `server_plain`. Returns the server's last result.
FeedResult Pump(TestTlsClient& client, TlsSession& server, std::string* server_plain = nullptr);

}  // namespace onepass::tls::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_CLIENT_H_
