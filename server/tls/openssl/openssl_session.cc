#include "server/tls/openssl/openssl_session.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <climits>

namespace onepass::tls {
namespace {

long BioControl(BIO* bio, int command, long arg, void* ptr) {
  // OpenSSL flushes after each flight; our writes are already in memory.
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

}  // namespace

OpenSslSession::~OpenSslSession() { SSL_free(ssl_); }

int OpenSslSession::BioRead(BIO* bio, char* data, int size) {
  auto* self = static_cast<OpenSslSession*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const size_t n =
      self->io_->ReadCiphertext(reinterpret_cast<uint8_t*>(data), static_cast<size_t>(size));
  if (n == 0) {
    BIO_set_retry_read(bio);  // SSL_ERROR_WANT_READ: wait for the next Feed
    return -1;
  }
  return static_cast<int>(n);
}

int OpenSslSession::BioWrite(BIO* bio, const char* data, int size) {
  auto* self = static_cast<OpenSslSession*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  if (!self->io_->WriteCiphertext(reinterpret_cast<const uint8_t*>(data),
                                  static_cast<size_t>(size))) {
    return -1;
  }
  return size;
}

bool OpenSslSession::NewSsl() {
  // One BIO_METHOD for the process, made on first use and kept (OpenSSL reads it, never
  // writes it, from any thread).
  static BIO_METHOD* const method = [] {
    BIO_METHOD* made = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "onepass_tls");
    BIO_meth_set_write(made, BioWrite);
    BIO_meth_set_read(made, BioRead);
    BIO_meth_set_ctrl(made, BioControl);
    BIO_meth_set_create(made, BioCreate);
    return made;
  }();
  SSL_free(ssl_);
  ssl_ = SSL_new(engine_.ssl_ctx());
  if (ssl_ == nullptr) return false;
  BIO* bio = BIO_new(method);
  if (bio == nullptr) {
    SSL_free(ssl_);
    ssl_ = nullptr;
    return false;
  }
  BIO_set_data(bio, this);
  SSL_set_bio(ssl_, bio, bio);  // one BIO both ways; the SSL owns it
  return true;
}

bool OpenSslSession::Begin(EngineIo* io, SessionHooks* hooks) {
  io_ = io;
  last_error_ = 0;
  if (ssl_ != nullptr && SSL_clear(ssl_) == 1) {
    // The server makes a fresh session (or one from the client's ticket) for each
    // ClientHello; dropping the last one here keeps it from outliving its connection.
    SSL_set_session(ssl_, nullptr);
  } else if (!NewSsl()) {
    return false;
  }
  SSL_set_app_data(ssl_, hooks);  // the context's callbacks count and ask the gate here
  SSL_set_accept_state(ssl_);
  return true;
}

bool OpenSslSession::FreeBuffers() { return ssl_ != nullptr && SSL_free_buffers(ssl_) == 1; }

EngineStep OpenSslSession::Failed(int rc) {
  last_error_ = SSL_get_error(ssl_, rc);
  if (last_error_ == SSL_ERROR_WANT_READ) return EngineStep::kWantRead;
  if (last_error_ == SSL_ERROR_ZERO_RETURN) return EngineStep::kClosed;
  return EngineStep::kError;
}

EngineStep OpenSslSession::Handshake() {
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) return EngineStep::kDone;
  const EngineStep step = Failed(rc);
  // A close_notify in the middle of a handshake is a failure, not a close.
  return step == EngineStep::kClosed ? EngineStep::kError : step;
}

EngineStep OpenSslSession::Read(absl::Span<uint8_t> into, size_t* got) {
  const int rc = SSL_read_ex(ssl_, into.data(), into.size(), got);
  if (rc == 1) return EngineStep::kDone;
  return Failed(rc);
}

bool OpenSslSession::Write(absl::Span<const uint8_t> plaintext, bool close_notify) {
  if (!plaintext.empty()) {
    size_t written = 0;
    // One SSL_write of the whole response: OpenSSL cuts records only at 16 KiB of plaintext
    // (RFC 8446 §5.1), so a DNS answer is one record and leaves in one send with its length.
    if (SSL_write_ex(ssl_, plaintext.data(), plaintext.size(), &written) != 1 ||
        written != plaintext.size()) {
      last_error_ = SSL_ERROR_SSL;
      return false;
    }
  }
  // SSL_shutdown returns 0 once our close_notify is written: we do not wait for the client's
  // (RFC 8446 §6.1 lets the closing side close at once).
  if (close_notify && SSL_shutdown(ssl_) < 0) {
    last_error_ = SSL_ERROR_SSL;
    return false;
  }
  return true;
}

bool OpenSslSession::HoldsPlaintext() const { return ssl_ != nullptr && SSL_pending(ssl_) > 0; }

HandshakeFacts OpenSslSession::Facts() const {
  HandshakeFacts facts;
  facts.resumed = SSL_session_reused(ssl_) == 1;
  facts.tls13 = SSL_version(ssl_) == TLS1_3_VERSION;
  // TLS 1.3 suites' protocol ids (RFC 8446 §B.4); the rest (1.2) is "other".
  switch (SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(ssl_))) {
    case 0x1301:
      facts.cipher = 0;
      break;
    case 0x1302:
      facts.cipher = 1;
      break;
    case 0x1303:
      facts.cipher = 2;
      break;
  }
  return facts;
}

absl::string_view OpenSslSession::Alpn() const {
  const unsigned char* name = nullptr;
  unsigned int size = 0;
  if (ssl_ != nullptr) SSL_get0_alpn_selected(ssl_, &name, &size);
  return {reinterpret_cast<const char*>(name), name == nullptr ? 0 : size};
}

int OpenSslSession::Version() const { return ssl_ != nullptr ? SSL_version(ssl_) : 0; }

void OpenSslSession::ClearErrors() { ERR_clear_error(); }

TlsFailure OpenSslSession::Classify(EngineStep step, bool handshake_done) const {
  const int ssl_error = last_error_;
  const unsigned long code = ERR_peek_error();
  // The client's end of the connection came with nothing queued: its doing (a client that
  // refuses our certificate may just close, as GnuTLS's kdig does), not a fault of ours.
  if (code == 0 && (ssl_error == SSL_ERROR_SYSCALL || ssl_error == SSL_ERROR_ZERO_RETURN)) {
    return TlsFailure::k_peer_closed;
  }
  if (code == 0 || ERR_GET_LIB(code) != ERR_LIB_SSL) return TlsFailure::k_internal;
  const int reason = ERR_GET_REASON(code);
  // Alerts the peer sent are reported as SSL_AD_REASON_OFFSET + the alert's code.
  if (reason >= SSL_AD_REASON_OFFSET) return TlsFailure::k_peer_alert;
  switch (reason) {
    case SSL_R_NO_APPLICATION_PROTOCOL:
      return TlsFailure::k_no_alpn_match;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_UNKNOWN_PROTOCOL:
      return TlsFailure::k_protocol_version;
    case SSL_R_NO_SHARED_CIPHER:
    case SSL_R_NO_SHARED_GROUPS:
    case SSL_R_NO_SUITABLE_KEY_SHARE:
    case SSL_R_NO_SHARED_SIGNATURE_ALGORITHMS:
    case SSL_R_NO_SUITABLE_SIGNATURE_ALGORITHM:
      return TlsFailure::k_no_shared_params;
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_RECORD_LENGTH_MISMATCH:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_ENCRYPTED_LENGTH_TOO_LONG:
    case SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC:
    case SSL_R_DATA_LENGTH_TOO_LONG:
    case SSL_R_BAD_RECORD_TYPE:
    case SSL_R_UNEXPECTED_RECORD:
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST:
      return TlsFailure::k_bad_record;
    default:
      return handshake_done ? TlsFailure::k_bad_record : TlsFailure::k_handshake;
  }
}

}  // namespace onepass::tls
