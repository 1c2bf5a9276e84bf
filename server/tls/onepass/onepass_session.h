// One connection of the onepass engine (onepass_engine.h): its own TLS 1.3 session
// (tls13/handshake/server_session.h) until the ClientHello is decided, then either that
// session to the end or the OpenSSL engine's session, given the bytes already read as if it had
// read them itself (nothing was sent before the decision, so OpenSSL sees the connection from
// its first byte).
#ifndef ONEPASS_SERVER_TLS_ONEPASS_ONEPASS_SESSION_H_
#define ONEPASS_SERVER_TLS_ONEPASS_ONEPASS_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/tls/onepass/onepass_engine.h"
#include "server/tls/tls13/handshake/server_session.h"
#include "server/tls/tls_engine.h"

namespace onepass::tls {

class OnepassSession final : public EngineSession, private tls13::AdmissionGate {
 public:
  explicit OnepassSession(const OnepassEngine& engine);
  ~OnepassSession() override;
  OnepassSession(const OnepassSession&) = delete;
  OnepassSession& operator=(const OnepassSession&) = delete;

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
  // The OpenSSL session's EngineIo after a fallback: the bytes our session read first, then
  // the connection's own.
  class ReplayIo final : public EngineIo {
   public:
    void Reset(absl::Span<const uint8_t> replay, EngineIo* io) {
      replay_ = replay;
      io_ = io;
    }
    size_t ReadCiphertext(uint8_t* data, size_t size) override;
    bool WriteCiphertext(const uint8_t* data, size_t size) override {
      return io_->WriteCiphertext(data, size);
    }

   private:
    absl::Span<const uint8_t> replay_;
    EngineIo* io_ = nullptr;
  };

  bool Admit(bool resumption) override;  // tls13::AdmissionGate: the connection's gate
  // Everything the connection has for us into own_; then own_'s output out. False when the
  // output bound refused it.
  void Pull();
  bool Flush();
  EngineStep FallBack();

  const OnepassEngine& engine_;
  tls13::ServerSession own_;
  std::unique_ptr<EngineSession> openssl_;  // made at the first fallback, reused after
  ReplayIo replay_;
  EngineIo* io_ = nullptr;
  SessionHooks* hooks_ = nullptr;
  bool fell_back_ = false;
  bool output_refused_ = false;
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_ONEPASS_ONEPASS_SESSION_H_
