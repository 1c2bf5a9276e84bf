// One connection's OpenSSL state (server/tls/tls_engine.h's EngineSession): an SSL made from its
// engine's SSL_CTX over a BIO that reads and writes the neutral session's buffers
// (EngineIo), cleared rather than freed from one connection to the next.
#ifndef ONEPASS_SERVER_TLS_OPENSSL_OPENSSL_SESSION_H_
#define ONEPASS_SERVER_TLS_OPENSSL_OPENSSL_SESSION_H_

#include <cstddef>

#include "server/tls/openssl/openssl_engine.h"
#include "server/tls/tls_engine.h"

typedef struct ssl_st SSL;
typedef struct bio_st BIO;

namespace onepass::tls {

class OpenSslSession final : public EngineSession {
 public:
  explicit OpenSslSession(const OpenSslEngine& engine) : engine_(engine) {}
  ~OpenSslSession() override;
  OpenSslSession(const OpenSslSession&) = delete;
  OpenSslSession& operator=(const OpenSslSession&) = delete;

  bool Begin(EngineIo* io, SessionHooks* hooks) override;
  bool FreeBuffers() override;
  EngineStep Handshake() override;
  EngineStep Read(absl::Span<uint8_t> into, size_t* got) override;
  bool Write(absl::Span<const uint8_t> plaintext, bool close_notify) override;
  bool HoldsPlaintext() const override;
  HandshakeFacts Facts() const override;
  absl::string_view Alpn() const override;
  int Version() const override;
  TlsFailure Classify(EngineStep step, bool handshake_done) const override;
  void ClearErrors() override;

 private:
  static int BioRead(BIO* bio, char* data, int size);
  static int BioWrite(BIO* bio, const char* data, int size);
  bool NewSsl();
  // What SSL_get_error said of a failed call; SSL_ERROR_SSL for a failed write.
  EngineStep Failed(int rc);

  const OpenSslEngine& engine_;
  EngineIo* io_ = nullptr;
  SSL* ssl_ = nullptr;
  int last_error_ = 0;
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_OPENSSL_OPENSSL_SESSION_H_
