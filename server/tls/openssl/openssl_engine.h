// The OpenSSL engine (server/tls/tls_engine.h): a context's SSL_CTX, built once from its
// configuration (TLS 1.3 only unless allow_tls12, no renegotiation, no compression, our order
// of cipher suites, X25519 first, stateless tickets from the context's ticket keys, no 0-RTT,
// ALPN, the ClientHello admitted by the connection's gate before the costly half), and the
// sessions made from it (openssl_session.h). OpenSSL 3's objects are read-only after Create
// and shared by every worker.
#ifndef ONEPASS_SERVER_TLS_OPENSSL_OPENSSL_ENGINE_H_
#define ONEPASS_SERVER_TLS_OPENSSL_OPENSSL_ENGINE_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/tls/tls_engine.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct evp_cipher_st EVP_CIPHER;

namespace onepass::tls {

class OpenSslEngine final : public TlsEngine {
 public:
  ~OpenSslEngine() override;
  absl::string_view name() const override { return "openssl"; }
  std::unique_ptr<EngineSession> NewSession() const override;

  // For its sessions and callbacks: an SSL made from ssl_ctx() has a SessionHooks* as its app
  // data (SSL_set_app_data); the context's app data is this engine.
  SSL_CTX* ssl_ctx() const { return ctx_; }
  const TlsServerContext& context() const { return context_; }
  // For the ticket callback: AES-256-CBC, fetched once.
  const EVP_CIPHER* ticket_cipher() const { return ticket_cipher_; }

 private:
  friend absl::StatusOr<std::unique_ptr<TlsEngine>> MakeOpenSslEngine(const TlsServerContext&,
                                                                      absl::Time,
                                                                      CertificateFacts*);
  explicit OpenSslEngine(const TlsServerContext& context) : context_(context) {}
  absl::Status LoadCertificateAndKey(CertificateFacts* facts);
  absl::Status Configure();
  absl::Status SetCipherSuites();  // TlsConfig::ciphersuites, every name checked

  const TlsServerContext& context_;
  SSL_CTX* ctx_ = nullptr;
  EVP_CIPHER* ticket_cipher_ = nullptr;
};

// The OpenSSL engine for `context`, its certificate and key loaded and checked; fills `facts`.
absl::StatusOr<std::unique_ptr<TlsEngine>> MakeOpenSslEngine(const TlsServerContext& context,
                                                             absl::Time now,
                                                             CertificateFacts* facts);

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_OPENSSL_OPENSSL_ENGINE_H_
