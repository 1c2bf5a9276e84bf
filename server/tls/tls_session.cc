#include "server/tls/tls_session.h"

#include <algorithm>
#include <cstring>

namespace onepass::tls {
namespace {

// Room for a typical first flight (ServerHello .. Finished with a short chain) and an answer,
// reserved once per slot so the common connection never grows the buffer.
constexpr size_t kInitialOutputBytes = 8 * 1024;

}  // namespace

TlsSession::TlsSession() { out_.reserve(kInitialOutputBytes); }

TlsSession::~TlsSession() = default;

size_t TlsSession::ReadCiphertext(uint8_t* data, size_t size) {
  const size_t n = std::min(in_.size() - in_read_, size);
  std::memcpy(data, in_.data() + in_read_, n);
  in_read_ += n;
  return n;
}

bool TlsSession::WriteCiphertext(const uint8_t* data, size_t size) {
  if (out_.size() - out_sent_ + size > context_->config().max_output_bytes) {
    output_overflow_ = true;
    return false;
  }
  out_.insert(out_.end(), data, data + size);
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
  // The engine's state is kept (its library object cleared, not freed) while the context is
  // the same one; a reload's new context makes a new one.
  if (engine_ == nullptr || context != context_) {
    context_ = context;
    engine_ = context_->engine().NewSession();
  }
  return engine_->Begin(this, &hooks_);
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
  engine_.reset();
  context_.reset();
  stats_ = nullptr;
  hooks_ = {};
}

bool TlsSession::ReleaseIdleBuffers() {
  if (engine_ == nullptr || out_sent_ != out_.size() || holds_plaintext()) return false;
  std::vector<uint8_t>().swap(out_);  // Start reserves it again for the next connection
  out_sent_ = 0;
  return engine_->FreeBuffers();
}

FeedResult TlsSession::Feed(absl::Span<const uint8_t> ciphertext, absl::Span<uint8_t> plaintext) {
  if (failed()) return {TlsResult::kFailed, 0, 0};
  engine_->ClearErrors();  // nothing of an earlier connection's in what Classify reads
  if (!CheckRecordHeader(ciphertext)) return Fail(TlsFailure::k_not_tls, ciphertext.size());
  in_ = ciphertext;
  in_read_ = 0;
  if (!handshake_done_) {
    handshake_bytes_ += ciphertext.size();
    if (handshake_bytes_ > context_->config().max_handshake_bytes) {
      return Fail(TlsFailure::k_handshake_too_large, ciphertext.size());
    }
    const EngineStep step = engine_->Handshake();
    if (step != EngineStep::kDone) {
      if (step == EngineStep::kWantRead && !output_overflow_) {
        in_ = {};
        return {TlsResult::kNeedMore, in_read_, 0};
      }
      return Fail(Classify(step), in_read_);
    }
    CompleteHandshake();
  }
  FeedResult result{TlsResult::kNeedMore, 0, 0};
  while (result.plaintext < plaintext.size()) {
    size_t got = 0;
    const EngineStep step = engine_->Read(plaintext.subspan(result.plaintext), &got);
    if (step == EngineStep::kDone) {
      result.plaintext += got;
      continue;
    }
    if (step == EngineStep::kWantRead && !output_overflow_) break;
    if (step == EngineStep::kClosed) {
      if (stats_ != nullptr) ++stats_->close_notify_received;
      result.result = TlsResult::kPeerClosed;
      break;
    }
    FeedResult failed = Fail(Classify(step), in_read_);
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
  const HandshakeFacts facts = engine_->Facts();
  resumed_ = facts.resumed;
  if (stats_ == nullptr) return;
  ++(resumed_ ? stats_->handshakes_resumed : stats_->handshakes_full);
  ++(facts.tls13 ? stats_->tls13 : stats_->tls12);
  ++(alpn().empty() ? stats_->alpn_absent : stats_->alpn_selected);
  ++stats_->cipher[facts.cipher];
  if (facts.onepass_engine) ++stats_->handshakes_onepass_engine;
}

bool TlsSession::Encrypt(absl::Span<const uint8_t> plaintext, bool close_notify) {
  if (failed() || !handshake_done_) return false;
  engine_->ClearErrors();
  if (!engine_->Write(plaintext, close_notify)) {
    Fail(Classify(EngineStep::kError), 0);
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
  return engine_ != nullptr ? engine_->Alpn() : absl::string_view();
}

bool TlsSession::holds_plaintext() const { return engine_ != nullptr && engine_->HoldsPlaintext(); }

int TlsSession::version() const { return handshake_done_ ? engine_->Version() : 0; }

TlsFailure TlsSession::Classify(EngineStep step) const {
  // What this side knows came first: its output bound, or the gate's refusal.
  if (output_overflow_) return TlsFailure::k_output_full;
  if (hooks_.refused) return TlsFailure::k_limit;
  return engine_->Classify(step, handshake_done_);
}

FeedResult TlsSession::Fail(TlsFailure failure, size_t consumed) {
  failure_ = failure;
  if (stats_ != nullptr) ++stats_->failed_by(failure);
  engine_->ClearErrors();
  in_ = {};
  return {TlsResult::kFailed, consumed, 0};
}

}  // namespace onepass::tls
