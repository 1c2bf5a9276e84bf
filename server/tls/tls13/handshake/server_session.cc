// ServerSession: records in and out (RFC 8446 §5), the dispatch by state, application data,
// KeyUpdate and failure. The handshake's own steps are in server_flight.cc.
#include "server/tls/tls13/handshake/server_session.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "openssl/crypto.h"
#include "server/tls/tls13/wire/client_messages.h"
#include "server/tls/tls13/wire/handshake_type.h"
#include "server/tls/tls13/wire/server_messages.h"

namespace onepass::tls::tls13 {
namespace {

// Room for the server's own messages but the certificate: ServerHello or HelloRetryRequest
// (under 200 bytes), EncryptedExtensions (ALPN: under 300), CertificateVerify (under 80),
// Finished (52), a NewSessionTicket (under 250), a KeyUpdate.
constexpr size_t kFlightCapacity = 4096;

}  // namespace

ServerSession::ServerSession(const SessionContext& context)
    : context_(context),
      transcript_(*context.algorithms),
      schedule_(*context.algorithms),
      key_exchange_(KeyExchange::Create()) {
  std::string why;
  if (context.private_key != nullptr) {
    signer_ = CertificateSigner::Create(context.private_key, &why);
  }
  if (context.tickets != nullptr) {
    ticket_sealer_ = std::make_unique<TicketSealer>(*context.tickets);
  }
  flight_.resize(kFlightCapacity);
  encrypted_flight_.reserve(kFlightCapacity + context.certificate_message.size());
  in_.reserve(4096);
  out_.reserve(2 * kFlightCapacity + context.certificate_message.size());
  record_.reserve(kMaxCiphertext);
  ok_ = key_exchange_ != nullptr;
}

ServerSession::~ServerSession() { WipeSecrets(); }

void ServerSession::Begin(AdmissionGate* gate) {
  gate_ = gate;
  // Capacity for the handshake, given back by ReleaseIdleBuffers to an idle connection.
  in_.reserve(4096);
  record_.reserve(kMaxCiphertext);
  encrypted_flight_.reserve(kFlightCapacity + context_.certificate_message.size());
  state_ = State::kFirstHello;
  in_.clear();
  in_pos_ = 0;
  out_.clear();
  app_.clear();
  app_pos_ = 0;
  messages_.clear();
  reader_.Reset();
  hello_ = ClientHello();
  seal_.Reset();
  open_.Reset();
  WipeSecrets();
  group_ = 0;
  max_fragment_ = kMaxPlaintext;
  resumed_ = retried_ = ticket_refused_ = change_cipher_spec_seen_ = sealing_ = false;
  OPENSSL_cleanse(first_ticket_random_, sizeof(first_ticket_random_));
  first_ticket_random_ready_ = false;
  peer_closed_ = false;
  alpn_length_ = 0;
  error_ = SessionError::kNone;
  reason_ = "";
  alert_ = AlertDescription::kCloseNotify;
  fallback_ = Fallback::kNone;
}

bool ServerSession::ReleaseIdleBuffers() {
  if (state_ != State::kConnected || HoldsPlaintext() || in_pos_ < in_.size() || !out_.empty()) {
    return false;
  }
  if (!record_.empty()) OPENSSL_cleanse(record_.data(), record_.size());
  std::vector<uint8_t>().swap(record_);
  std::vector<uint8_t>().swap(app_);
  std::vector<uint8_t>().swap(in_);
  std::vector<uint8_t>().swap(encrypted_flight_);
  app_pos_ = in_pos_ = 0;
  return true;
}

void ServerSession::WipeSecrets() {
  OPENSSL_cleanse(psk_, sizeof(psk_));
  OPENSSL_cleanse(client_handshake_secret_, sizeof(client_handshake_secret_));
  OPENSSL_cleanse(client_app_secret_, sizeof(client_app_secret_));
  OPENSSL_cleanse(server_app_secret_, sizeof(server_app_secret_));
  psk_length_ = 0;
  if (!app_.empty()) OPENSSL_cleanse(app_.data(), app_.size());
  if (!record_.empty()) OPENSSL_cleanse(record_.data(), record_.size());
}

bool ServerSession::NextRecord(uint8_t* type, absl::Span<const uint8_t>* record) {
  const size_t left = in_.size() - in_pos_;
  if (left < kRecordHeaderLength) return false;
  const uint8_t* header = in_.data() + in_pos_;
  const size_t length = static_cast<size_t>(header[3]) << 8 | header[4];
  *type = header[0];
  // A first flight that is no handshake record is OpenSSL's to refuse, from its header: no
  // need to buffer up to 16 KiB of it first.
  if (state_ == State::kFirstHello && (*type != kContentHandshake || header[1] != 3)) {
    fallback_ = Fallback::k_not_understood;
    return false;
  }
  // §5.1/§5.2: a plaintext record carries at most 2^14 bytes, a protected one 2^14 + 256.
  const size_t bound =
      *type == kContentApplicationData ? kMaxCiphertext - kRecordHeaderLength : kMaxPlaintext;
  if (length > bound) {
    if (state_ == State::kFirstHello) {  // nothing sent yet: OpenSSL judges the record
      fallback_ = Fallback::k_not_understood;
    } else {
      Fail(SessionError::kBadRecord, AlertDescription::kRecordOverflow, "record too long");
    }
    return false;
  }
  if (left < kRecordHeaderLength + length) return false;
  *record = absl::Span<const uint8_t>(header, kRecordHeaderLength + length);
  in_pos_ += kRecordHeaderLength + length;
  return true;
}

void ServerSession::AppendPlaintextRecord(uint8_t type, absl::Span<const uint8_t> fragment) {
  const uint8_t header[kRecordHeaderLength] = {type, 3, 3,
                                               static_cast<uint8_t>(fragment.size() >> 8),
                                               static_cast<uint8_t>(fragment.size())};
  out_.insert(out_.end(), header, header + kRecordHeaderLength);
  out_.insert(out_.end(), fragment.begin(), fragment.end());
}

bool ServerSession::SealHandshake(absl::Span<const uint8_t> messages) {
  while (!messages.empty()) {
    const size_t n = std::min(messages.size(), max_fragment_);
    if (!seal_.Seal(kContentHandshake, messages.subspan(0, n), 0, out_)) return false;
    messages.remove_prefix(n);
  }
  return true;
}

bool ServerSession::AddHeaderToTranscript(const HandshakeMessage& message) {
  const size_t n = message.body.size();
  const uint8_t header[4] = {message.type, static_cast<uint8_t>(n >> 16),
                             static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
  return transcript_.Add(absl::Span<const uint8_t>(header, 4));
}

bool ServerSession::AddToTranscript(const HandshakeMessage& message) {
  return AddHeaderToTranscript(message) && transcript_.Add(message.body);
}

bool ServerSession::InstallKeys(RecordProtection::Direction direction,
                                absl::Span<const uint8_t> secret, RecordProtection& protection) {
  uint8_t key[kMaxKeyLength];
  uint8_t iv[kIvLength];
  const size_t key_length = KeyLength(suite_);
  const bool ok =
      schedule_.TrafficKeys(secret, {key, key_length}, {iv, kIvLength}) &&
      protection.Init(*context_.algorithms, suite_, direction, {key, key_length}, {iv, kIvLength});
  OPENSSL_cleanse(key, sizeof(key));
  OPENSSL_cleanse(iv, sizeof(iv));
  return ok;
}

void ServerSession::DropTakenInput() {
  if (in_pos_ == 0) return;
  in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(in_pos_));
  in_pos_ = 0;
}

ServerSession::Status ServerSession::Fail(SessionError error, AlertDescription alert,
                                          const char* reason) {
  if (error_ != SessionError::kNone) return Status::kFailed;  // the first failure is the one
  error_ = error;
  reason_ = reason;
  state_ = State::kDone;
  // A client's alert is not answered (§6.2: the connection is closed at once).
  if (error != SessionError::kPeerAlert && error != SessionError::kPeerClosed) {
    alert_ = alert;
    const std::array<uint8_t, 2> body = AlertBody(alert);
    if (sealing_) {
      seal_.Seal(kContentAlert, body, 0, out_);
    } else {
      AppendPlaintextRecord(kContentAlert, body);
    }
  }
  WipeSecrets();
  return Status::kFailed;
}

ServerSession::Status ServerSession::Handshake() {
  if (state_ == State::kDone)
    return error_ == SessionError::kNone ? Status::kClosed : Status::kFailed;
  if (state_ == State::kConnected) return peer_closed_ ? Status::kClosed : Status::kConnected;
  if (state_ != State::kFirstHello) DropTakenInput();  // received() matters only before deciding
  uint8_t type = 0;
  absl::Span<const uint8_t> record;
  while (true) {
    if (!NextRecord(&type, &record)) {
      if (error_ != SessionError::kNone) return Status::kFailed;
      if (fallback_ != Fallback::kNone) return Status::kFallback;
      return Status::kWantRead;
    }
    Status status = Status::kWantRead;
    if (state_ == State::kFirstHello || state_ == State::kSecondHello) {
      status = OnHelloRecord(type, record);
    } else {
      status = OnEncryptedRecord(record, {}, nullptr);
    }
    if (status != Status::kWantRead) return status;
  }
}

ServerSession::Status ServerSession::OnHelloRecord(uint8_t type, absl::Span<const uint8_t> record) {
  const bool first = state_ == State::kFirstHello;
  const absl::Span<const uint8_t> fragment = record.subspan(kRecordHeaderLength);
  auto not_ours = [&](AlertDescription alert, const char* reason) {
    if (first) {  // nothing sent yet: OpenSSL reads the same bytes and answers them
      fallback_ = Fallback::k_not_understood;
      return Status::kFallback;
    }
    return Fail(SessionError::kProtocol, alert, reason);
  };
  if (type == kContentChangeCipherSpec) {
    // Appendix D.4: one change_cipher_spec (the byte 1) may come after the first ClientHello.
    if (first || change_cipher_spec_seen_ || fragment.size() != 1 || fragment[0] != 1) {
      return not_ours(AlertDescription::kUnexpectedMessage, "unexpected change_cipher_spec");
    }
    change_cipher_spec_seen_ = true;
    return Status::kWantRead;
  }
  if (type == kContentAlert) {
    if (first) return not_ours(AlertDescription::kUnexpectedMessage, "alert");
    return Fail(SessionError::kPeerAlert, AlertDescription::kCloseNotify, "client alert");
  }
  if (type != kContentHandshake || fragment.empty()) {
    return not_ours(AlertDescription::kUnexpectedMessage, "not a handshake record");
  }
  messages_.clear();
  if (reader_.Feed(fragment, messages_) != HandshakeReader::Result::kOk) {
    return not_ours(reader_.error(), "handshake message too long");
  }
  if (messages_.empty()) return Status::kWantRead;
  // The ClientHello is the whole flight: nothing may follow it before our answer, and §5.1
  // forbids a message to straddle the key change our answer makes.
  if (messages_.size() != 1 || !reader_.AtMessageBoundary() || in_pos_ != in_.size()) {
    return not_ours(AlertDescription::kUnexpectedMessage, "data after the ClientHello");
  }
  if (messages_[0].type != kClientHello) {
    return not_ours(AlertDescription::kUnexpectedMessage, "first message not a ClientHello");
  }
  return OnClientHello(messages_[0]);
}

ServerSession::Status ServerSession::OnEncryptedRecord(absl::Span<const uint8_t> record,
                                                       absl::Span<uint8_t> into, size_t* got) {
  const uint8_t type = record[0];
  const absl::Span<const uint8_t> fragment = record.subspan(kRecordHeaderLength);
  if (type == kContentChangeCipherSpec && state_ == State::kClientFinished &&
      !change_cipher_spec_seen_ && fragment.size() == 1 && fragment[0] == 1) {
    change_cipher_spec_seen_ = true;  // Appendix D.4, before the client's Finished
    return Status::kWantRead;
  }
  if (type == kContentAlert && state_ == State::kClientFinished) {
    // A client that could not use our ServerHello has no keys yet: its alert is plaintext.
    return Fail(SessionError::kPeerAlert, AlertDescription::kCloseNotify, "client alert");
  }
  if (type != kContentApplicationData) {
    return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                "plaintext record after the handshake keys");
  }
  const OpenResult opened = open_.Open(record, record_);
  if (!opened.ok) {
    return Fail(SessionError::kBadRecord, static_cast<AlertDescription>(opened.alert),
                "record failed to decrypt");
  }
  // §5.4: handshake and alert records are never empty.
  if (record_.empty() && opened.content_type != kContentApplicationData) {
    return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage, "empty record");
  }
  switch (opened.content_type) {
    case kContentHandshake: {
      messages_.clear();
      if (reader_.Feed(record_, messages_) != HandshakeReader::Result::kOk) {
        return Fail(SessionError::kProtocol, reader_.error(), "handshake message too long");
      }
      for (size_t i = 0; i < messages_.size(); ++i) {
        if (state_ == State::kClientFinished) {
          // §5.1: the client's Finished changes its keys: nothing may follow it in the record.
          if (i + 1 < messages_.size()) {
            return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                        "a message after the client's Finished in its record");
          }
          return OnClientFinished(messages_[i]);
        }
        if (OnPostHandshake(messages_[i]) == Status::kFailed) return Status::kFailed;
      }
      return Status::kWantRead;
    }
    case kContentAlert:
      if (record_.size() != 2) {
        return Fail(SessionError::kProtocol, AlertDescription::kDecodeError, "bad alert");
      }
      if (record_[1] == static_cast<uint8_t>(AlertDescription::kCloseNotify)) {
        if (state_ != State::kConnected) {
          return Fail(SessionError::kPeerClosed, AlertDescription::kCloseNotify,
                      "close_notify during the handshake");
        }
        peer_closed_ = true;
        return Status::kClosed;
      }
      return Fail(SessionError::kPeerAlert, AlertDescription::kCloseNotify, "client alert");
    case kContentApplicationData:
      if (state_ != State::kConnected) {
        return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                    "application data before the client's Finished");
      }
      if (got == nullptr || record_.empty()) return Status::kWantRead;
      {
        const size_t n = std::min(into.size(), record_.size());
        std::memcpy(into.data(), record_.data(), n);
        *got += n;
        app_.assign(record_.begin() + static_cast<std::ptrdiff_t>(n), record_.end());
        app_pos_ = 0;
      }
      return Status::kConnected;
    default:
      return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                  "unknown content type");
  }
}

ServerSession::Status ServerSession::OnPostHandshake(const HandshakeMessage& message) {
  if (message.type != kKeyUpdate) {
    return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                "post-handshake message other than KeyUpdate");
  }
  const KeyUpdateResult update = ParseKeyUpdate(message.body);
  if (!update.ok) return Fail(SessionError::kProtocol, update.alert, "bad KeyUpdate");
  if (!reader_.AtMessageBoundary()) {  // §5.1: not across the key change
    return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                "KeyUpdate not at a record's end");
  }
  // §4.6.3: the client's next records are under its next secret; when it asks, ours too,
  // after our own KeyUpdate under the current keys.
  const size_t h = schedule_.hash_length();
  bool ok = schedule_.NextTrafficSecret({client_app_secret_, h}, {client_app_secret_, h}) &&
            InstallKeys(RecordProtection::Direction::kOpen, {client_app_secret_, h}, open_);
  if (ok && update.update_requested) {
    MessageWriter writer(absl::MakeSpan(flight_));
    const absl::Span<const uint8_t> ours = WriteKeyUpdate(false, &writer);
    ok = !ours.empty() && SealHandshake(ours) &&
         schedule_.NextTrafficSecret({server_app_secret_, h}, {server_app_secret_, h}) &&
         InstallKeys(RecordProtection::Direction::kSeal, {server_app_secret_, h}, seal_);
  }
  if (!ok) return Fail(SessionError::kInternal, AlertDescription::kInternalError, "KeyUpdate");
  return Status::kConnected;
}

ServerSession::Status ServerSession::Read(absl::Span<uint8_t> into, size_t* got) {
  *got = 0;
  if (app_pos_ < app_.size()) {
    const size_t n = std::min(into.size(), app_.size() - app_pos_);
    std::memcpy(into.data(), app_.data() + app_pos_, n);
    app_pos_ += n;
    *got = n;
    return Status::kConnected;
  }
  if (state_ == State::kDone)
    return error_ == SessionError::kNone ? Status::kClosed : Status::kFailed;
  if (state_ != State::kConnected) return Status::kWantRead;
  if (peer_closed_) return Status::kClosed;  // §6.1: what follows close_notify is ignored
  DropTakenInput();
  uint8_t type = 0;
  absl::Span<const uint8_t> record;
  while (NextRecord(&type, &record)) {
    const Status status = OnEncryptedRecord(record, into, got);
    if (status == Status::kFailed || status == Status::kClosed) return status;
    if (*got > 0) return Status::kConnected;
  }
  return error_ == SessionError::kNone ? Status::kWantRead : Status::kFailed;
}

bool ServerSession::Write(absl::Span<const uint8_t> plaintext, bool close_notify) {
  if (state_ != State::kConnected) return false;
  while (!plaintext.empty()) {
    const size_t n = std::min(plaintext.size(), max_fragment_);
    if (!seal_.Seal(kContentApplicationData, plaintext.subspan(0, n), 0, out_)) {
      Fail(SessionError::kInternal, AlertDescription::kInternalError, "sealing failed");
      return false;
    }
    plaintext.remove_prefix(n);
  }
  if (close_notify) {
    const std::array<uint8_t, 2> body = AlertBody(AlertDescription::kCloseNotify);
    if (!seal_.Seal(kContentAlert, body, 0, out_)) return false;
  }
  return true;
}

}  // namespace onepass::tls::tls13
