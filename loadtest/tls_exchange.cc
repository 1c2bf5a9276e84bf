#include "loadtest/tls_exchange.h"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstring>

namespace onepass::load {
namespace {

constexpr size_t kPlainBytes = 16 * 1024;  // one TLS record's plaintext at most (RFC 8446 §5.1)

}  // namespace

TlsExchange::~TlsExchange() { SSL_free(ssl_); }

void TlsExchange::Begin(int64_t origin_ns, int64_t now_ns) {
  SSL_free(ssl_);
  ssl_ = nullptr;
  out_.clear();
  out_offset_ = 0;
  ended_ = false;
  offered_ticket_ = false;
  origin_ns_ = origin_ns;
  handshake_done_ns_ = 0;
  phase_ = Phase::kConnecting;
  exchange_.Begin(origin_ns, now_ns);
  ssl_ = SSL_new(context_->ctx());
  in_ = BIO_new(BIO_s_mem());
  out_bio_ = BIO_new(BIO_s_mem());
  if (ssl_ == nullptr || in_ == nullptr || out_bio_ == nullptr) {
    BIO_free(in_);
    BIO_free(out_bio_);
    Fail(ErrorKind::kLocalError, "TLS set-up failed", TakeOpenSslError(), now_ns);
    return;
  }
  SSL_set_bio(ssl_, in_, out_bio_);
  SSL_set_connect_state(ssl_);
  SSL_set_ex_data(ssl_, TlsClientContext::OwnerIndex(), this);
  const std::string& sni = context_->options().sni;
  if (!sni.empty()) SSL_set_tlsext_host_name(ssl_, sni.c_str());
  if (SSL_SESSION* ticket = tickets_->NextOffer()) {
    offered_ticket_ = SSL_set_session(ssl_, ticket) == 1;
    SSL_SESSION_free(ticket);  // the SSL holds its own reference
  }
  if (plain_.size() < kPlainBytes) plain_.resize(kPlainBytes);
}

void TlsExchange::OnConnected(int error, int64_t now_ns) {
  if (!active() || phase_ != Phase::kConnecting) return;
  if (error != 0) {
    exchange_.OnConnected(error, now_ns);
    AfterEnd(now_ns);
    return;
  }
  phase_ = Phase::kHandshaking;
  ++stats_->tls.started;
  if (offered_ticket_) ++stats_->tls.resume_offered;
  Handshake(now_ns);
}

void TlsExchange::OnSent(size_t bytes, int64_t now_ns) {
  out_offset_ += std::min(bytes, out_.size() - out_offset_);
  if (out_offset_ == out_.size()) {
    out_.clear();
    out_offset_ = 0;
  }
}

void TlsExchange::OnReceived(absl::string_view bytes, int64_t now_ns) {
  if (!active() || bytes.empty()) return;
  if (phase_ == Phase::kConnecting) OnConnected(0, now_ns);  // bytes prove the connection
  if (!active()) return;
  if (BIO_write(in_, bytes.data(), static_cast<int>(bytes.size())) !=
      static_cast<int>(bytes.size())) {
    Fail(ErrorKind::kLocalError, "TLS input buffer failed", TakeOpenSslError(), now_ns);
    return;
  }
  if (phase_ == Phase::kHandshaking) {
    Handshake(now_ns);
  } else {
    Pump(now_ns);
  }
}

void TlsExchange::OnPeerClosed(int64_t now_ns) {
  if (!active()) return;
  if (phase_ != Phase::kOpen) {
    Fail(ErrorKind::kTlsHandshake, "closed during the handshake", "", now_ns);
    return;
  }
  exchange_.OnPeerClosed(now_ns);
  AfterEnd(now_ns);
}

void TlsExchange::OnError(int error, int64_t now_ns) {
  if (!active()) return;
  exchange_.OnError(error, now_ns);
  AfterEnd(now_ns);
}

void TlsExchange::OnTimeout(int64_t now_ns) {
  if (!active()) return;
  exchange_.OnTimeout(now_ns);
  AfterEnd(now_ns);
}

void TlsExchange::Handshake(int64_t now_ns) {
  const int rc = SSL_do_handshake(ssl_);
  DrainOutput();
  if (rc == 1) {
    HandshakeDone(now_ns);
    return;
  }
  const int error = SSL_get_error(ssl_, rc);
  if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return;
  FailSsl(error, now_ns);
}

void TlsExchange::HandshakeDone(int64_t now_ns) {
  phase_ = Phase::kOpen;
  handshake_done_ns_ = now_ns;
  TlsCounts& tls = stats_->tls;
  tls.handshake_latency.Record(static_cast<uint64_t>(std::max<int64_t>(0, now_ns - origin_ns_)));
  if (SSL_session_reused(ssl_)) {
    ++tls.resumed;
  } else {
    ++tls.full;
  }
  if (SSL_version(ssl_) == TLS1_3_VERSION) ++tls.tls13;
  const unsigned char* alpn = nullptr;
  unsigned int alpn_length = 0;
  SSL_get0_alpn_selected(ssl_, &alpn, &alpn_length);
  if (alpn_length == 3 && std::memcmp(alpn, "dot", 3) == 0) ++tls.alpn_dot;
  exchange_.OnConnected(0, now_ns);
  Pump(now_ns);
}

void TlsExchange::Pump(int64_t now_ns) {
  while (active()) {
    // The queries (the first ones right after the client's Finished: one send for both).
    while (!exchange_.unsent().empty()) {
      absl::string_view plain = exchange_.unsent();
      const int n = SSL_write(ssl_, plain.data(), static_cast<int>(plain.size()));
      if (n <= 0) {
        FailSsl(SSL_get_error(ssl_, n), now_ns);
        return;
      }
      exchange_.OnSent(static_cast<size_t>(n), now_ns);
    }
    // Answers, and the tickets the server sends after the handshake.
    while (active()) {
      const int n = SSL_read(ssl_, plain_.data(), static_cast<int>(plain_.size()));
      if (n > 0) {
        exchange_.OnReceived(absl::string_view(plain_.data(), static_cast<size_t>(n)), now_ns);
        continue;
      }
      const int error = SSL_get_error(ssl_, n);
      if (error == SSL_ERROR_WANT_READ) break;
      if (error == SSL_ERROR_ZERO_RETURN) {  // close_notify
        exchange_.OnPeerClosed(now_ns);
        break;
      }
      FailSsl(error, now_ns);
      return;
    }
    DrainOutput();
    if (exchange_.unsent().empty()) break;  // else: the next queries (--queries-per-conn)
  }
  if (!active()) AfterEnd(now_ns);
}

void TlsExchange::FailSsl(int result, int64_t now_ns) {
  unsigned long code = 0;
  std::string detail = TakeOpenSslError(&code);
  const char* reason = code != 0 ? ERR_reason_error_string(code) : nullptr;
  ErrorKind kind = ErrorKind::kTlsError;
  if (phase_ != Phase::kOpen) {
    kind = ErrorKind::kTlsHandshake;
    const long verify = SSL_get_verify_result(ssl_);
    if (verify != X509_V_OK) {
      kind = ErrorKind::kTlsVerify;
      reason = X509_verify_cert_error_string(verify);
    }
  }
  if (reason == nullptr) {
    reason = phase_ != Phase::kOpen ? "TLS handshake failed" : "TLS failed";
    if (result == SSL_ERROR_SYSCALL && code == 0) detail = "no more input";
  }
  Fail(kind, reason, detail, now_ns);
}

void TlsExchange::Fail(ErrorKind kind, const char* reason, const std::string& detail,
                       int64_t now_ns) {
  exchange_.OnTransportFailed(kind, reason, detail, now_ns);
  AfterEnd(now_ns);
}

void TlsExchange::AfterEnd(int64_t now_ns) {
  if (ended_ || active()) return;
  ended_ = true;
  if (phase_ == Phase::kHandshaking) ++stats_->tls.failed;
  if (!exchange_.succeeded() || ssl_ == nullptr) return;
  stats_->tls.answer_latency.Record(
      static_cast<uint64_t>(std::max<int64_t>(0, now_ns - handshake_done_ns_)));
  SSL_shutdown(ssl_);  // close_notify, for the driver's last send
  DrainOutput();
  ERR_clear_error();
}

void TlsExchange::DrainOutput() {
  const size_t pending = BIO_ctrl_pending(out_bio_);
  if (pending == 0) return;
  if (out_offset_ == out_.size()) {
    out_.clear();
    out_offset_ = 0;
  }
  const size_t old = out_.size();
  out_.resize(old + pending);
  const int n = BIO_read(out_bio_, out_.data() + old, static_cast<int>(pending));
  out_.resize(old + static_cast<size_t>(std::max(n, 0)));
}

}  // namespace onepass::load
