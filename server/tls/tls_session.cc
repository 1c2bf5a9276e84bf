#include "server/tls/tls_session.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <climits>
#include <cstring>

namespace onepass::tls {

namespace {

// Room for a typical first flight (ServerHello .. Finished with a short chain) and an answer,
// reserved once per slot so the common connection never grows the buffer.
constexpr size_t kInitialOutputBytes = 8 * 1024;

long BioControl(BIO* bio, int command, long arg, void* ptr) {
  // OpenSSL flushes after each flight; our writes are already in memory.
  return command == BIO_CTRL_FLUSH ? 1 : 0;
}

int BioCreate(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

}  // namespace

TlsSession::TlsSession() { out_.reserve(kInitialOutputBytes); }

TlsSession::~TlsSession() { SSL_free(ssl_); }

int TlsSession::BioRead(BIO* bio, char* data, int size) {
  auto* self = static_cast<TlsSession*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const size_t left = self->in_.size() - self->in_read_;
  if (left == 0) {
    BIO_set_retry_read(bio);  // SSL_ERROR_WANT_READ: wait for the next Feed
    return -1;
  }
  const size_t n = std::min(left, static_cast<size_t>(size));
  std::memcpy(data, self->in_.data() + self->in_read_, n);
  self->in_read_ += n;
  return static_cast<int>(n);
}

int TlsSession::BioWrite(BIO* bio, const char* data, int size) {
  auto* self = static_cast<TlsSession*>(BIO_get_data(bio));
  BIO_clear_retry_flags(bio);
  const size_t max = self->context_->config().max_output_bytes;
  if (self->out_.size() - self->out_sent_ + size > max) {
    self->output_overflow_ = true;
    return -1;
  }
  self->out_.insert(self->out_.end(), data, data + size);
  return size;
}

bool TlsSession::NewSsl() {
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
  ssl_ = SSL_new(context_->ssl_ctx());
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

bool TlsSession::Start(const std::shared_ptr<const TlsServerContext>& context, TlsStats* stats,
                       HandshakeGate* gate) {
  stats_ = stats;
  hooks_ = {.stats = stats, .gate = gate};
  in_ = {};
  in_read_ = 0;
  out_.clear();
  out_.reserve(kInitialOutputBytes);  // after ReleaseIdleBuffers; a no-op otherwise
  out_sent_ = 0;
  output_overflow_ = false;
  handshake_bytes_ = 0;
  header_seen_ = 0;
  handshake_done_ = false;
  resumed_ = false;
  failure_ = TlsFailure::kNone;
  if (ssl_ != nullptr && context == context_ && SSL_clear(ssl_) == 1) {
    // The server makes a fresh session (or one from the client's ticket) for each
    // ClientHello; dropping the last one here keeps it from outliving its connection.
    SSL_set_session(ssl_, nullptr);
  } else {
    context_ = context;
    if (!NewSsl()) return false;
  }
  SSL_set_app_data(ssl_, &hooks_);  // the context's callbacks count and ask the gate here
  SSL_set_accept_state(ssl_);
  return true;
}

bool TlsSession::CheckRecordHeader(absl::Span<const uint8_t> ciphertext) {
  // Look at the first three bytes ourselves: a plain DNS query (length prefix) or HTTP text on
  // the TLS port is "not TLS", not "a bad record", and gets no alert it could not read.
  for (size_t i = 0; header_seen_ < 3 && i < ciphertext.size(); ++i, ++header_seen_) {
    const uint8_t byte = ciphertext[i];
    const bool ok = header_seen_ == 0   ? byte == kHandshakeRecord
                    : header_seen_ == 1 ? byte == 3  // legacy_record_version 3.x
                                        : byte <= 4;
    if (!ok) return false;
  }
  return true;
}

void TlsSession::Release() {
  SSL_free(ssl_);
  ssl_ = nullptr;
  context_.reset();
  stats_ = nullptr;
  hooks_ = {};
}

bool TlsSession::ReleaseIdleBuffers() {
  if (ssl_ == nullptr || out_sent_ != out_.size() || holds_plaintext()) return false;
  std::vector<uint8_t>().swap(out_);  // Start reserves it again for the next connection
  out_sent_ = 0;
  return SSL_free_buffers(ssl_) == 1;
}

FeedResult TlsSession::Feed(absl::Span<const uint8_t> ciphertext, absl::Span<uint8_t> plaintext) {
  if (failed()) return {TlsResult::kFailed, 0, 0};
  ERR_clear_error();  // SSL_get_error reads the thread's queue: nothing of others' in it
  if (!CheckRecordHeader(ciphertext)) return Fail(TlsFailure::k_not_tls, ciphertext.size());
  in_ = ciphertext;
  in_read_ = 0;
  if (!handshake_done_) {
    handshake_bytes_ += ciphertext.size();
    if (handshake_bytes_ > context_->config().max_handshake_bytes) {
      return Fail(TlsFailure::k_handshake_too_large, ciphertext.size());
    }
    const int rc = SSL_do_handshake(ssl_);
    if (rc != 1) {
      const int error = SSL_get_error(ssl_, rc);
      if (error == SSL_ERROR_WANT_READ && !output_overflow_) {
        in_ = {};
        return {TlsResult::kNeedMore, in_read_, 0};
      }
      return Fail(Classify(error), in_read_);
    }
    CompleteHandshake();
  }
  FeedResult result{TlsResult::kNeedMore, 0, 0};
  while (result.plaintext < plaintext.size()) {
    size_t got = 0;
    const int rc = SSL_read_ex(ssl_, plaintext.data() + result.plaintext,
                               plaintext.size() - result.plaintext, &got);
    if (rc == 1) {
      result.plaintext += got;
      continue;
    }
    const int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ && !output_overflow_) break;
    if (error == SSL_ERROR_ZERO_RETURN) {
      if (stats_ != nullptr) ++stats_->close_notify_received;
      result.result = TlsResult::kPeerClosed;
      break;
    }
    FeedResult failed = Fail(Classify(error), in_read_);
    failed.plaintext = result.plaintext;  // what came before the bad record is still valid
    return failed;
  }
  result.consumed = in_read_;
  in_ = {};
  if (result.result == TlsResult::kNeedMore && result.plaintext > 0) {
    result.result = TlsResult::kPlaintext;
  }
  return result;
}

void TlsSession::CompleteHandshake() {
  handshake_done_ = true;
  resumed_ = SSL_session_reused(ssl_) == 1;
  if (stats_ == nullptr) return;
  ++(resumed_ ? stats_->handshakes_resumed : stats_->handshakes_full);
  ++(SSL_version(ssl_) == TLS1_3_VERSION ? stats_->tls13 : stats_->tls12);
  ++(alpn().empty() ? stats_->alpn_absent : stats_->alpn_selected);
  // TLS 1.3 suites' protocol ids (RFC 8446 §B.4); the rest (1.2) is "other".
  int suite = 3;
  switch (SSL_CIPHER_get_protocol_id(SSL_get_current_cipher(ssl_))) {
    case 0x1301:
      suite = 0;
      break;
    case 0x1302:
      suite = 1;
      break;
    case 0x1303:
      suite = 2;
      break;
  }
  ++stats_->cipher[suite];
}

bool TlsSession::Encrypt(absl::Span<const uint8_t> plaintext, bool close_notify) {
  if (failed() || !handshake_done_) return false;
  ERR_clear_error();
  if (!plaintext.empty()) {
    size_t written = 0;
    // One SSL_write of the whole response: OpenSSL cuts records only at 16 KiB of plaintext
    // (RFC 8446 §5.1), so a DNS answer is one record and leaves in one send with its length.
    if (SSL_write_ex(ssl_, plaintext.data(), plaintext.size(), &written) != 1 ||
        written != plaintext.size()) {
      Fail(Classify(SSL_ERROR_SSL), 0);
      return false;
    }
  }
  // SSL_shutdown returns 0 once our close_notify is written: we do not wait for the client's
  // (RFC 8446 §6.1 lets the closing side close at once).
  if (close_notify && SSL_shutdown(ssl_) < 0) {
    Fail(Classify(SSL_ERROR_SSL), 0);
    return false;
  }
  return true;
}

void TlsSession::ConsumePending(size_t n) {
  out_sent_ += n;
  if (out_sent_ == out_.size()) {
    out_.clear();  // keeps the capacity for the next connection of this slot
    out_sent_ = 0;
  }
}

absl::string_view TlsSession::alpn() const {
  const unsigned char* name = nullptr;
  unsigned int size = 0;
  if (ssl_ != nullptr) SSL_get0_alpn_selected(ssl_, &name, &size);
  return {reinterpret_cast<const char*>(name), name == nullptr ? 0 : size};
}

bool TlsSession::holds_plaintext() const { return ssl_ != nullptr && SSL_pending(ssl_) > 0; }

int TlsSession::version() const { return handshake_done_ ? SSL_version(ssl_) : 0; }

TlsFailure TlsSession::Classify(int ssl_error) const {
  if (output_overflow_) return TlsFailure::k_output_full;
  if (hooks_.refused) return TlsFailure::k_limit;
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
      return handshake_done_ ? TlsFailure::k_bad_record : TlsFailure::k_handshake;
  }
}

FeedResult TlsSession::Fail(TlsFailure failure, size_t consumed) {
  failure_ = failure;
  if (stats_ != nullptr) ++stats_->failed_by(failure);
  ERR_clear_error();
  in_ = {};
  return {TlsResult::kFailed, consumed, 0};
}

}  // namespace onepass::tls
