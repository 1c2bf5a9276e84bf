// The onepass engine (server/tls/tls_engine.h): this project's own TLS 1.3 server handshake
// (server/tls/tls13/) for the profile DNS over TLS uses, with the OpenSSL engine behind it for
// everything else. Made from the same context as the OpenSSL engine, which it builds first: the
// certificate and key are loaded and checked once, by OpenSSL, and this engine takes the chain
// (as its Certificate message) and the key from it.
//
// Which connections it serves is decided per ClientHello (tls13/handshake/choose.h); the rest
// get the OpenSSL engine's session with the same bytes, counted by reason in TlsStats. With a
// key other than ECDSA P-256 every connection goes to OpenSSL, and Summary() says so.
#ifndef ONEPASS_SERVER_TLS_ONEPASS_ONEPASS_ENGINE_H_
#define ONEPASS_SERVER_TLS_ONEPASS_ONEPASS_ENGINE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "openssl/evp.h"
#include "server/tls/tls13/crypto/cipher_suite.h"
#include "server/tls/tls13/handshake/server_policy.h"
#include "server/tls/tls13/handshake/server_session.h"
#include "server/tls/tls13/ticket/session_ticket.h"
#include "server/tls/tls_engine.h"

namespace onepass::tls {

class OnepassEngine final : public TlsEngine {
 public:
  // The OpenSSL engine for `context` first (facts from it), then this engine's half.
  static absl::StatusOr<std::unique_ptr<TlsEngine>> Create(const TlsServerContext& context,
                                                           absl::Time now, CertificateFacts* facts);
  ~OnepassEngine() override;
  absl::string_view name() const override { return "onepass"; }
  std::unique_ptr<EngineSession> NewSession() const override;
  std::string Coverage() const override;

  const TlsEngine& fallback() const { return *openssl_; }
  const tls13::SessionContext& session_context() const { return session_context_; }
  // Whether the key lets this engine serve at all (ECDSA P-256); why not, for the summary.
  bool serves() const { return serves_; }
  const std::string& why_not() const { return why_not_; }

 private:
  OnepassEngine() = default;

  std::unique_ptr<TlsEngine> openssl_;
  std::unique_ptr<tls13::SuiteAlgorithms> algorithms_;
  tls13::ServerPolicy policy_;
  std::vector<uint8_t> certificate_message_;
  EVP_PKEY* private_key_ = nullptr;  // up-referenced from OpenSSL's SSL_CTX
  std::unique_ptr<tls13::TicketKeyring> keyring_;
  tls13::SessionContext session_context_;
  bool serves_ = false;
  std::string why_not_;
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_ONEPASS_ONEPASS_ENGINE_H_
