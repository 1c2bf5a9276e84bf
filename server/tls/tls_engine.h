// The seam between the library-neutral TLS layer and a TLS library (Seastar's session_base
// over tls_openssl.cc / tls_gnutls.cc): what TlsServerContext and TlsSession ask of an engine.
// The neutral side keeps the configuration and its checks, the ticket-key file and its
// rotation (ticket_keys.h), the record-header check before any library sees a byte
// (tls_record.h), the buffers and their limits, the counters and what a failure is counted as.
// An engine does the cryptography and the handshake state machine: OpenSSL's is openssl/, ours
// (TLS 1.3 over libcrypto's primitives, OpenSSL behind it for what it does not serve) is
// onepass/; TlsConfig::engine (--tls-engine) picks one per context.
#ifndef ONEPASS_SERVER_TLS_TLS_ENGINE_H_
#define ONEPASS_SERVER_TLS_TLS_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/tls/handshake_gate.h"
#include "server/tls/tls_stats.h"

namespace onepass::tls {

class TlsServerContext;

// What the engine found in the certificate and key it loaded, for the neutral summary and the
// expiry warnings.
struct CertificateFacts {
  std::string subject;
  std::string issuer;
  std::string key_description;  // "ECDSA P-256", "RSA 2048 bits"
  int chain_length = 0;
  absl::Time not_before;
  absl::Time not_after;
};

// What a completed handshake was, as counted (TlsStats).
struct HandshakeFacts {
  bool resumed = false;
  bool tls13 = false;
  int cipher = 3;  // TlsCipherName's index: TLS 1.3's three suites, 3 for anything else
  bool onepass_engine = false;  // served by our own TLS 1.3 engine, not by OpenSSL's
};

// The session's ciphertext, as its engine reads and writes it: the bytes of the current Feed,
// and the pending output with its bound (TlsConfig::max_output_bytes).
class EngineIo {
 public:
  virtual ~EngineIo() = default;
  // Up to `size` bytes of received ciphertext into `data`; 0 when none is left (the engine
  // wants more: the next Feed).
  virtual size_t ReadCiphertext(uint8_t* data, size_t size) = 0;
  // `size` bytes to send; false (nothing taken) when they would exceed the output bound.
  virtual bool WriteCiphertext(const uint8_t* data, size_t size) = 0;
};

// How an engine's step ended.
enum class EngineStep : uint8_t {
  kDone,      // the handshake is complete / plaintext was read / written
  kWantRead,  // more ciphertext is needed
  kClosed,    // the client sent close_notify
  kError,     // failed: Classify says why
};

// One connection's library state, owned by a TlsSession and reused from one connection to the
// next under the same context.
class EngineSession {
 public:
  virtual ~EngineSession() = default;
  // A new connection reading from and writing to `io`, its context's callbacks counting into
  // and asking `hooks` (both outlive the connection). False when the library cannot.
  virtual bool Begin(EngineIo* io, SessionHooks* hooks) = 0;
  // Between requests, nothing pending: gives back the library's record buffers.
  virtual bool FreeBuffers() = 0;
  virtual EngineStep Handshake() = 0;
  // Plaintext into `into`; `*got` bytes of it (kDone).
  virtual EngineStep Read(absl::Span<uint8_t> into, size_t* got) = 0;
  // The whole of `plaintext` as records (cut at 16 KiB of plaintext, RFC 8446 §5.1); then, when
  // `close_notify`, the close_notify alert (without waiting for the client's, §6.1).
  virtual bool Write(absl::Span<const uint8_t> plaintext, bool close_notify) = 0;
  virtual bool HoldsPlaintext() const = 0;
  virtual HandshakeFacts Facts() const = 0;
  // The ALPN protocol selected, empty without; the version (0x0304, 0x0303) once done.
  virtual absl::string_view Alpn() const = 0;
  virtual int Version() const = 0;
  // Why the last step failed, from the library's own error (the neutral side has ruled out its
  // own causes first: its output bound, a refusal of the gate).
  virtual TlsFailure Classify(EngineStep step, bool handshake_done) const = 0;
  // Forgets the library's errors (its per-thread queue) before a step.
  virtual void ClearErrors() = 0;
};

// A context's library half: built from the context's configuration, ticket keys and ALPN
// (which outlive it), read-only after, shared by every worker.
class TlsEngine {
 public:
  virtual ~TlsEngine() = default;
  virtual absl::string_view name() const = 0;  // "openssl", "onepass"
  virtual std::unique_ptr<EngineSession> NewSession() const = 0;
  // For the summary (--check, the start-up report): what the engine serves itself and what it
  // hands on, one sentence; empty when there is nothing to add to its name.
  virtual std::string Coverage() const { return {}; }
};

// The engine TlsConfig::engine names for `context`, the certificate and key loaded and
// checked; fills `facts`. Errors name the flag and the file and say what to do.
absl::StatusOr<std::unique_ptr<TlsEngine>> MakeTlsEngine(const TlsServerContext& context,
                                                         absl::Time now, CertificateFacts* facts);

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_ENGINE_H_
