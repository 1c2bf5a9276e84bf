// The server side of one TLS 1.3 connection (RFC 8446) as this engine serves it: ciphertext
// in, ciphertext out, no socket, no clock of its own but the wall clock for tickets.
//
// The profile is the one-query connection of DNS over TLS: the ClientHello decides (choose.h)
// between serving, a HelloRetryRequest and handing the bytes to the OpenSSL engine; served, the
// server's flight (ServerHello, EncryptedExtensions, Certificate, CertificateVerify, Finished)
// leaves in one output, the client's Finished and its query come in one input, and the tickets,
// the answer and close_notify leave in one output again.
//
// Invariants, each with its section:
//   - the PSK binder is verified (constant time) before the PSK is used (§4.2.11);
//   - the transcript is every handshake message as sent, with message_hash after a retry
//     (§4.4.1);
//   - every failure of ours leaves exactly one alert in the output, the one §6 and the section
//     that breaks name, encrypted once keys are in use (§6: alerts are records like any other);
//     the client's own alert is not answered (§6.2);
//   - the client's Finished is compared in constant time (KeySchedule::VerifyFinished);
//   - secrets are wiped when superseded and when the connection ends.
//
// Thread-confined; one per connection slot, Begin() again for the next connection (nothing is
// freed: contexts and buffers keep their capacity).
#ifndef ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_SERVER_SESSION_H_
#define ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_SERVER_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "openssl/evp.h"
#include "server/tls/tls13/crypto/certificate_signer.h"
#include "server/tls/tls13/crypto/cipher_suite.h"
#include "server/tls/tls13/crypto/key_exchange.h"
#include "server/tls/tls13/crypto/key_schedule.h"
#include "server/tls/tls13/crypto/record_protection.h"
#include "server/tls/tls13/crypto/transcript.h"
#include "server/tls/tls13/handshake/choose.h"
#include "server/tls/tls13/handshake/server_policy.h"
#include "server/tls/tls13/ticket/session_ticket.h"
#include "server/tls/tls13/wire/alert.h"
#include "server/tls/tls13/wire/client_hello.h"
#include "server/tls/tls13/wire/handshake_reader.h"

namespace onepass::tls::tls13 {

// What a context gives each of its sessions, read-only and shared by every worker.
struct SessionContext {
  const SuiteAlgorithms* algorithms = nullptr;
  const ServerPolicy* policy = nullptr;
  // The Certificate message (EncodeCertificateMessage of the chain), made once.
  absl::Span<const uint8_t> certificate_message;
  EVP_PKEY* private_key = nullptr;  // the leaf's, ECDSA P-256
  const TicketKeyring* tickets = nullptr;
};

// Asked before the costly half of a handshake (the key exchange and the signature), as the
// OpenSSL engine asks server/tls/handshake_gate.h: `resumption` when the client offers a
// ticket, and again with false when the ticket turns out not to be one we accept.
class AdmissionGate {
 public:
  virtual ~AdmissionGate() = default;
  virtual bool Admit(bool resumption) = 0;
};

// Why a session failed, for the caller's counters.
enum class SessionError : uint8_t {
  kNone,
  kBadRecord,       // a malformed, oversized or undecryptable record
  kProtocol,        // a message or an order the protocol forbids
  kNoSharedParams,  // after a retry: nothing left in common
  kNoAlpn,          // after a retry: no ALPN protocol of ours
  kProtocolVersion,
  kPeerAlert,   // the client sent a fatal alert
  kPeerClosed,  // close_notify before the handshake was done
  kRefused,     // the AdmissionGate said no
  kInternal,    // libcrypto failed
};

// age_add (4 bytes) and the ticket's IV (kTicketIvLength).
inline constexpr size_t kFirstTicketRandomLength = 4 + kTicketIvLength;

class ServerSession {
 public:
  enum class Status : uint8_t {
    kWantRead,   // more input is needed (send output() first)
    kFallback,   // not ours: hand received() to the OpenSSL engine, nothing was sent
    kConnected,  // the handshake is done (tickets are in output())
    kClosed,     // the client sent close_notify
    kFailed,     // error() says why; output() holds the alert
  };

  // `context` outlives the session. Creates the per-slot contexts (key exchange, signer,
  // ticket sealer); ok() false when libcrypto cannot.
  explicit ServerSession(const SessionContext& context);
  ~ServerSession();
  ServerSession(const ServerSession&) = delete;
  ServerSession& operator=(const ServerSession&) = delete;

  bool ok() const { return ok_; }

  // A new connection; `gate` may be null (all admitted) and outlives the connection.
  void Begin(AdmissionGate* gate);

  // Appends ciphertext the client sent.
  void Receive(absl::Span<const uint8_t> ciphertext) {
    in_.insert(in_.end(), ciphertext.begin(), ciphertext.end());
  }
  // Runs the handshake as far as the input allows.
  Status Handshake();
  // Application data into `into` (`*got` bytes; 0 with kWantRead when none is complete).
  // kConnected while the connection is open.
  Status Read(absl::Span<uint8_t> into, size_t* got);
  bool HoldsPlaintext() const { return app_pos_ < app_.size(); }
  // Between requests of a kept connection (nothing received unread, nothing to send): gives
  // back the record buffers (about 17 KiB with the largest record's room), made again by the
  // next record. False when something is still held.
  bool ReleaseIdleBuffers();
  // Encrypts `plaintext` as records of at most the client's record size onto output(), then
  // close_notify when asked. False (failed) on a libcrypto failure.
  bool Write(absl::Span<const uint8_t> plaintext, bool close_notify);

  // Ciphertext to send; the caller takes it and calls ClearOutput().
  absl::Span<const uint8_t> output() const { return out_; }
  void ClearOutput() { out_.clear(); }
  // Everything received before the decision to fall back (kFallback): the OpenSSL engine is
  // given these bytes as if it had read them itself.
  absl::Span<const uint8_t> received() const { return in_; }

  SessionError error() const { return error_; }
  const char* error_reason() const { return reason_; }
  AlertDescription alert_sent() const { return alert_; }
  Fallback fallback() const { return fallback_; }
  bool resumed() const { return resumed_; }
  bool retried() const { return retried_; }                // a HelloRetryRequest was sent
  bool ticket_refused() const { return ticket_refused_; }  // a ticket offered, not accepted
  uint16_t suite() const { return static_cast<uint16_t>(suite_); }
  uint16_t group() const { return group_; }
  absl::Span<const uint8_t> alpn() const { return {alpn_, alpn_length_}; }

 private:
  enum class State : uint8_t { kFirstHello, kSecondHello, kClientFinished, kConnected, kDone };

  // One whole record from in_ at in_pos_, or false (incomplete, or failed: see error_).
  bool NextRecord(uint8_t* type, absl::Span<const uint8_t>* record);
  Status OnHelloRecord(uint8_t type, absl::Span<const uint8_t> record);
  Status OnClientHello(const HandshakeMessage& message);
  Status SendRetry(const Choice& choice, const HandshakeMessage& message);
  Status Serve(const Choice& choice, const HandshakeMessage& message);
  // Opens a ticket offered in the hello and checks its binder: true with psk_ set when it
  // resumes, false for a full handshake. Sets error_ when the binder is wrong.
  bool TryResume(absl::Span<const uint8_t> binder_hash);
  // `server_random`: the ServerHello's 32 bytes.
  bool SendServerFlight(const Choice& choice, absl::Span<const uint8_t> server_random,
                        absl::Span<const uint8_t> shared_secret,
                        absl::Span<const uint8_t> server_share);
  Status OnEncryptedRecord(absl::Span<const uint8_t> record, absl::Span<uint8_t> into, size_t* got);
  Status OnClientFinished(const HandshakeMessage& message);
  Status OnPostHandshake(const HandshakeMessage& message);
  bool SendTickets();
  bool SealHandshake(absl::Span<const uint8_t> messages);
  bool AddToTranscript(const HandshakeMessage& message);
  bool AddHeaderToTranscript(const HandshakeMessage& message);  // type and u24 length (§4)
  // The traffic key and iv of `secret` (§7.3) into `protection`, wiped after.
  bool InstallKeys(RecordProtection::Direction direction, absl::Span<const uint8_t> secret,
                   RecordProtection& protection);
  // Forgets in_ before in_pos_ (records already taken).
  void DropTakenInput();
  void AppendPlaintextRecord(uint8_t type, absl::Span<const uint8_t> fragment);
  Status Fail(SessionError error, AlertDescription alert, const char* reason);
  void WipeSecrets();

  const SessionContext& context_;
  bool ok_ = false;
  AdmissionGate* gate_ = nullptr;
  Transcript transcript_;
  KeySchedule schedule_;
  RecordProtection seal_, open_;
  HandshakeReader reader_;
  std::unique_ptr<KeyExchange> key_exchange_;
  std::unique_ptr<CertificateSigner> signer_;
  std::unique_ptr<TicketSealer> ticket_sealer_;

  State state_ = State::kFirstHello;
  std::vector<uint8_t> in_;  // received, from in_pos_ not yet taken as records
  size_t in_pos_ = 0;
  std::vector<uint8_t> out_;
  std::vector<uint8_t> record_;  // a record's content as opened
  std::vector<uint8_t> app_;     // application data not yet read, from app_pos_
  size_t app_pos_ = 0;
  std::vector<uint8_t> flight_;  // MessageWriter's buffer: the server's messages as written
  std::vector<uint8_t> encrypted_flight_;  // EncryptedExtensions..Finished, before sealing
  std::vector<HandshakeMessage> messages_;
  ClientHello hello_;  // views into messages_' body while it is decided

  CipherSuite suite_ = CipherSuite::kAes128GcmSha256;
  uint16_t group_ = 0;
  size_t max_fragment_ = kMaxPlaintext;  // RFC 8449: the client's record_size_limit - 1
  bool resumed_ = false;
  bool retried_ = false;
  bool ticket_refused_ = false;
  bool change_cipher_spec_seen_ = false;
  bool sealing_ = false;  // seal_ has keys: alerts go encrypted
  // The client's close_notify came (§6.1: it closes the client's side only): nothing more is
  // read, but the answer to what came before it is still written.
  bool peer_closed_ = false;
  uint8_t alpn_[255] = {};
  size_t alpn_length_ = 0;
  uint8_t psk_[kMaxHashLength] = {};
  size_t psk_length_ = 0;
  uint8_t client_handshake_secret_[kMaxHashLength] = {};
  uint8_t client_app_secret_[kMaxHashLength] = {};
  uint8_t server_app_secret_[kMaxHashLength] = {};
  uint8_t server_finished_hash_[kMaxHashLength] = {};  // Transcript-Hash(CH..server Finished)
  // The first ticket's obfuscated_ticket_age_add and sealing IV, drawn with the ServerHello's
  // random in one RAND_bytes call (a call costs ~0.5 µs whatever its length: the DRBG's lock
  // and fork check); later tickets of the connection draw their own. Used at most once.
  uint8_t first_ticket_random_[kFirstTicketRandomLength] = {};
  bool first_ticket_random_ready_ = false;

  SessionError error_ = SessionError::kNone;
  const char* reason_ = "";
  AlertDescription alert_ = AlertDescription::kCloseNotify;
  Fallback fallback_ = Fallback::kNone;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_SERVER_SESSION_H_
