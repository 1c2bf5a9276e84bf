#include "server/tls/onepass/onepass_session.h"

#include <algorithm>
#include <cstring>

#include "openssl/err.h"

namespace onepass::tls {
namespace {

using tls13::ServerSession;
using tls13::SessionError;

// What a ServerSession's status is as an engine step.
EngineStep StepOf(ServerSession::Status status) {
  switch (status) {
    case ServerSession::Status::kWantRead:
      return EngineStep::kWantRead;
    case ServerSession::Status::kConnected:
      return EngineStep::kDone;
    case ServerSession::Status::kClosed:
      return EngineStep::kClosed;
    case ServerSession::Status::kFallback:  // handled before; never reaches here
    case ServerSession::Status::kFailed:
      break;
  }
  return EngineStep::kError;
}

}  // namespace

size_t OnepassSession::ReplayIo::ReadCiphertext(uint8_t* data, size_t size) {
  if (!replay_.empty()) {
    const size_t n = std::min(size, replay_.size());
    std::memcpy(data, replay_.data(), n);
    replay_.remove_prefix(n);
    return n;
  }
  return io_->ReadCiphertext(data, size);
}

OnepassSession::OnepassSession(const OnepassEngine& engine)
    : engine_(engine), own_(engine.session_context()) {}

OnepassSession::~OnepassSession() = default;

bool OnepassSession::Begin(EngineIo* io, SessionHooks* hooks) {
  io_ = io;
  hooks_ = hooks;
  fell_back_ = false;
  output_refused_ = false;
  if (!own_.ok()) return false;
  own_.Begin(this);
  return true;
}

bool OnepassSession::Admit(bool resumption) {
  if (hooks_ == nullptr || hooks_->gate == nullptr) return true;
  if (hooks_->gate->Admit(resumption)) return true;
  hooks_->refused = true;  // TlsSession counts it as a refusal (TlsFailure::k_limit)
  return false;
}

void OnepassSession::Pull() {
  uint8_t chunk[4096];
  while (const size_t n = io_->ReadCiphertext(chunk, sizeof(chunk))) {
    own_.Receive({chunk, n});
  }
}

bool OnepassSession::Flush() {
  const absl::Span<const uint8_t> out = own_.output();
  if (!out.empty() && !io_->WriteCiphertext(out.data(), out.size())) output_refused_ = true;
  own_.ClearOutput();
  return !output_refused_;
}

EngineStep OnepassSession::FallBack() {
  fell_back_ = true;
  if (hooks_ != nullptr && hooks_->stats != nullptr) {
    ++hooks_->stats->fallback_by(static_cast<int>(own_.fallback()));
  }
  if (openssl_ == nullptr) openssl_ = engine_.fallback().NewSession();
  replay_.Reset(own_.received(), io_);
  if (openssl_ == nullptr || !openssl_->Begin(&replay_, hooks_)) return EngineStep::kError;
  return openssl_->Handshake();
}

EngineStep OnepassSession::Handshake() {
  if (fell_back_) return openssl_->Handshake();
  Pull();
  const ServerSession::Status status = own_.Handshake();
  if (status == ServerSession::Status::kFallback) return FallBack();
  const bool flushed = Flush();
  if (status == ServerSession::Status::kConnected && hooks_ != nullptr &&
      hooks_->stats != nullptr) {
    if (own_.retried()) ++hooks_->stats->hello_retry_requests;
    // A ticket offered and not taken (another key, the other engine's, expired): a full
    // handshake, counted as the OpenSSL engine counts a ticket of a retired key.
    if (own_.ticket_refused()) ++hooks_->stats->tickets_unknown_key;
  }
  if (!flushed) return EngineStep::kError;
  return StepOf(status);
}

EngineStep OnepassSession::Read(absl::Span<uint8_t> into, size_t* got) {
  if (fell_back_) return openssl_->Read(into, got);
  *got = 0;
  Pull();
  const ServerSession::Status status = own_.Read(into, got);
  if (!Flush()) return EngineStep::kError;  // a KeyUpdate of ours, an alert
  if (status == ServerSession::Status::kConnected && *got == 0) return EngineStep::kWantRead;
  return StepOf(status);
}

bool OnepassSession::Write(absl::Span<const uint8_t> plaintext, bool close_notify) {
  if (fell_back_) return openssl_->Write(plaintext, close_notify);
  const bool written = own_.Write(plaintext, close_notify);
  return Flush() && written;
}

bool OnepassSession::FreeBuffers() {
  if (fell_back_) return openssl_->FreeBuffers();
  return own_.ReleaseIdleBuffers();
}

bool OnepassSession::HoldsPlaintext() const {
  return fell_back_ ? openssl_->HoldsPlaintext() : own_.HoldsPlaintext();
}

HandshakeFacts OnepassSession::Facts() const {
  if (fell_back_) return openssl_->Facts();
  HandshakeFacts facts;
  facts.resumed = own_.resumed();
  facts.tls13 = true;
  facts.onepass_engine = true;
  facts.cipher = own_.suite() - 0x1301;  // TlsCipherName's order is the code points' order
  return facts;
}

absl::string_view OnepassSession::Alpn() const {
  if (fell_back_) return openssl_->Alpn();
  const absl::Span<const uint8_t> alpn = own_.alpn();
  return {reinterpret_cast<const char*>(alpn.data()), alpn.size()};
}

int OnepassSession::Version() const {
  if (fell_back_) return openssl_->Version();
  return 0x0304;
}

TlsFailure OnepassSession::Classify(EngineStep step, bool handshake_done) const {
  if (fell_back_) return openssl_->Classify(step, handshake_done);
  if (output_refused_) return TlsFailure::k_output_full;
  switch (own_.error()) {
    case SessionError::kBadRecord:
      return TlsFailure::k_bad_record;
    case SessionError::kProtocol:
      return TlsFailure::k_handshake;
    case SessionError::kNoSharedParams:
      return TlsFailure::k_no_shared_params;
    case SessionError::kNoAlpn:
      return TlsFailure::k_no_alpn_match;
    case SessionError::kProtocolVersion:
      return TlsFailure::k_protocol_version;
    case SessionError::kPeerAlert:
      return TlsFailure::k_peer_alert;
    case SessionError::kPeerClosed:
      return TlsFailure::k_peer_closed;
    case SessionError::kRefused:
      return TlsFailure::k_limit;
    case SessionError::kNone:
    case SessionError::kInternal:
      break;
  }
  return TlsFailure::k_internal;
}

void OnepassSession::ClearErrors() {
  if (fell_back_) openssl_->ClearErrors();
  ERR_clear_error();
}

}  // namespace onepass::tls
