// What the TLS 1.3 engine's session fuzzers share (issue 39): the server's SessionContext made
// once per process (tests/unit/server/tls/tls13_test_context.h, as server_session_test.cc makes
// it), OpenSSL's client over memory BIOs with its traffic secrets (the key log), and a reader
// of the records a server wrote. Fuzz and seed tools only: every failure to set up aborts.
#ifndef ONEPASS_TESTS_FUZZ_SERVER_TLS13_TLS13_FUZZ_SUPPORT_H_
#define ONEPASS_TESTS_FUZZ_SERVER_TLS13_TLS13_FUZZ_SUPPORT_H_

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "server/tls/tls13/crypto/cipher_suite.h"
#include "server/tls/tls13/crypto/record_protection.h"
#include "tests/unit/server/tls/tls13_test_context.h"

namespace onepass::tls::tls13::fuzz {

// The suites and groups both engines are given in the differential fuzzer.
inline constexpr const char* kSuites = onepass::tls::testing::Tls13TestContext::kSuites;
inline constexpr const char* kGroups = "X25519:P-256";

// The server's context, made once per process (never freed: it lives as long as a worker's
// context does).
const onepass::tls::testing::Tls13TestContext& Fixture();

struct ClientConfig {
  const char* groups = nullptr;  // SSL_set1_groups_list; null: OpenSSL's own
  const char* suites = nullptr;  // SSL_set_ciphersuites; null: OpenSSL's own
  std::string alpn = "dot";      // one protocol offered; empty: no ALPN
  int min_version = TLS1_3_VERSION;
  SSL_SESSION* session = nullptr;  // offered for resumption (not taken over)
};

// OpenSSL's client (no certificate verification: the fuzzers need its bytes, not its trust).
class FuzzClient {
 public:
  explicit FuzzClient(const ClientConfig& config = {});
  ~FuzzClient();
  FuzzClient(const FuzzClient&) = delete;
  FuzzClient& operator=(const FuzzClient&) = delete;

  // SSL_do_handshake once: true when the handshake is complete.
  bool Step();
  std::string TakeOutput();
  void GiveInput(absl::Span<const uint8_t> bytes);
  // Application data, sealed by OpenSSL, onto the next TakeOutput().
  void Write(const std::string& plaintext);
  // Reads whatever came (tickets, data) and returns the session to resume (caller frees).
  SSL_SESSION* TakeSession();
  SSL* ssl() { return ssl_; }

  // The key log's secrets (§7.1), empty until the client derived them.
  const std::vector<uint8_t>& handshake_secret() const { return handshake_secret_; }
  const std::vector<uint8_t>& application_secret() const { return application_secret_; }
  void OnKeyLogLine(const char* line);

 private:
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;
  BIO* out_ = nullptr;
  std::vector<uint8_t> handshake_secret_, application_secret_;
};

// A client's record sealer under a secret from the key log (§7.3), with §7.2's update.
class ClientSealer {
 public:
  // False when the secret is empty or libcrypto fails.
  bool Init(CipherSuite suite, absl::Span<const uint8_t> secret);
  bool NextSecret();  // after a KeyUpdate the sealer sent
  bool ready() const { return ready_; }
  bool Seal(uint8_t content_type, absl::Span<const uint8_t> plaintext, size_t padding,
            std::vector<uint8_t>& out);

 private:
  bool Rekey();
  CipherSuite suite_ = CipherSuite::kAes128GcmSha256;
  std::vector<uint8_t> secret_;
  RecordProtection protection_;
  bool ready_ = false;
};

// The records in `bytes` (header included); false when the bytes are not whole records.
bool SplitRecords(absl::Span<const uint8_t> bytes, std::vector<absl::Span<const uint8_t>>* records);

// What a server's first record says.
enum class FirstAnswer { kNothing, kServerHello, kHelloRetryRequest, kAlert, kOther };
FirstAnswer ClassifyFirstRecord(absl::Span<const uint8_t> bytes, uint8_t* alert);
const char* AnswerName(FirstAnswer answer);
// "decode_error", ... for the alerts of RFC 8446 §6 ("alert_N" for another value).
std::string AlertName(uint8_t description);
std::string Hex(absl::Span<const uint8_t> bytes);

inline absl::Span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace onepass::tls::tls13::fuzz

#endif  // ONEPASS_TESTS_FUZZ_SERVER_TLS13_TLS13_FUZZ_SUPPORT_H_
