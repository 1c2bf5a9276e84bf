// The TLS 1.3 engine's SessionContext (server/tls/tls13/handshake/server_session.h) as the
// engine makes one, over the TLS layer's test PKI: three suites, ALPN "dot", one ticket per
// handshake, one ticket key (tests/unit/server/tls/tls13/ticket/test_keys.h); and the loop that
// drives a ServerSession against OpenSSL's client over memory. Shared by the engine's unit
// tests, its fuzzers and their seed tool.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_TEST_CONTEXT_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_TEST_CONTEXT_H_

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "server/tls/ticket_keys.h"
#include "server/tls/tls13/crypto/cipher_suite.h"
#include "server/tls/tls13/handshake/server_policy.h"
#include "server/tls/tls13/handshake/server_session.h"
#include "server/tls/tls13/ticket/session_ticket.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::tls::testing {

class Tls13TestContext {
 public:
  // The suites the policy serves, in its order.
  static constexpr const char* kSuites =
      "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";
  // The seed of the one ticket key (MakeKey in test_keys.h).
  static constexpr uint8_t kTicketKeySeed = 0x41;

  // Null, with *why set, when a part cannot be made.
  static std::unique_ptr<Tls13TestContext> Create(std::string* why);
  ~Tls13TestContext();
  Tls13TestContext(const Tls13TestContext&) = delete;
  Tls13TestContext& operator=(const Tls13TestContext&) = delete;

  // Points into this object: valid as long as it lives.
  const tls13::SessionContext& context() const { return context_; }
  const TestPkiDir& pki() const { return pki_; }
  const tls13::SuiteAlgorithms& algorithms() const { return *algorithms_; }
  const std::vector<TicketKey>& ticket_keys() const { return ticket_keys_; }

 private:
  Tls13TestContext() = default;

  TestPkiDir pki_;
  std::unique_ptr<tls13::SuiteAlgorithms> algorithms_;
  tls13::ServerPolicy policy_;
  std::vector<uint8_t> certificate_message_;
  EVP_PKEY* private_key_ = nullptr;
  std::vector<TicketKey> ticket_keys_;
  std::unique_ptr<tls13::TicketKeyring> keyring_;
  tls13::SessionContext context_;
};

// Moves bytes both ways between an OpenSSL client over memory and `server` until neither side
// has more to say, or the server falls back or fails (the client then reads what it got), at
// most 20 rounds; returns the server's last status. `tamper` may change the client's bytes on
// their way. Client: TestTlsClient or the fuzzers' FuzzClient (Step, TakeOutput returning a
// std::string, GiveInput of a span of bytes).
template <typename Client>
tls13::ServerSession::Status Pump(Client& client, tls13::ServerSession& server,
                                  void (*tamper)(std::string&) = nullptr) {
  using Status = tls13::ServerSession::Status;
  Status status = Status::kWantRead;
  for (int round = 0; round < 20; ++round) {
    client.Step();
    std::string to_server = client.TakeOutput();
    if (tamper != nullptr && !to_server.empty()) tamper(to_server);
    if (!to_server.empty()) {
      server.Receive({reinterpret_cast<const uint8_t*>(to_server.data()), to_server.size()});
      status = server.Handshake();
    }
    const absl::Span<const uint8_t> out = server.output();
    const bool server_said = !out.empty();
    if (server_said) {
      client.GiveInput(out);
      server.ClearOutput();
    }
    if (to_server.empty() && !server_said) break;
    if (status == Status::kFallback || status == Status::kFailed) {
      client.Step();
      break;
    }
  }
  return status;
}

}  // namespace onepass::tls::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_TEST_CONTEXT_H_
