// ServerSession's handshake steps (RFC 8446 §2 and §4): the ClientHello decided, the
// HelloRetryRequest, the resumption check, the server's flight with its key schedule, the
// client's Finished and the tickets.
#include <algorithm>
#include <cstring>
#include <ctime>

#include "openssl/crypto.h"
#include "openssl/rand.h"
#include "server/tls/tls13/handshake/server_session.h"
#include "server/tls/tls13/wire/client_messages.h"
#include "server/tls/tls13/wire/handshake_type.h"
#include "server/tls/tls13/wire/server_messages.h"

namespace onepass::tls::tls13 {
namespace {

// RFC 8449 §4: what we accept from the client in one record (TLS 1.3 counts the content type
// byte): the protocol's maximum, 2^14 + 1.
constexpr uint16_t kOurRecordSizeLimit = (1 << 14) + 1;

uint64_t NowUnixMs() {
  timespec now;
  clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000 + static_cast<uint64_t>(now.tv_nsec) / 1000000;
}

SessionError ErrorOfRefusal(AlertDescription alert) {
  switch (alert) {
    case AlertDescription::kNoApplicationProtocol:
      return SessionError::kNoAlpn;
    case AlertDescription::kProtocolVersion:
      return SessionError::kProtocolVersion;
    case AlertDescription::kHandshakeFailure:
      return SessionError::kNoSharedParams;
    default:
      return SessionError::kProtocol;
  }
}

}  // namespace

ServerSession::Status ServerSession::OnClientHello(const HandshakeMessage& message) {
  const bool first = state_ == State::kFirstHello;
  const ClientHelloResult parsed = ParseClientHello(message.body, &hello_);
  if (!parsed.ok) {
    if (first) {
      fallback_ = Fallback::k_not_understood;
      return Status::kFallback;
    }
    return Fail(SessionError::kProtocol, parsed.alert, parsed.reason);
  }
  if (first && signer_ == nullptr) {  // a key this engine cannot sign with
    fallback_ = Fallback::k_certificate;
    return Status::kFallback;
  }
  const Choice choice =
      first ? ChooseForFirstHello(hello_, *context_.policy)
            : ChooseForSecondHello(hello_, *context_.policy, static_cast<uint16_t>(suite_), group_);
  switch (choice.action) {
    case Choice::Action::kFallback:
      fallback_ = choice.fallback;
      return Status::kFallback;
    case Choice::Action::kRefuse:
      return Fail(ErrorOfRefusal(choice.alert), choice.alert, choice.reason);
    case Choice::Action::kRetry:
      return SendRetry(choice, message);
    case Choice::Action::kServe:
      break;
  }
  return Serve(choice, message);
}

ServerSession::Status ServerSession::SendRetry(const Choice& choice,
                                               const HandshakeMessage& message) {
  suite_ = static_cast<CipherSuite>(choice.suite);
  group_ = choice.group;
  // §4.4.1: the transcript goes on from Hash(ClientHello1) as a message_hash message.
  if (!transcript_.Start(suite_) || !AddToTranscript(message) ||
      !transcript_.ReplaceWithMessageHash()) {
    return Fail(SessionError::kInternal, AlertDescription::kInternalError, "transcript");
  }
  MessageWriter writer(absl::MakeSpan(flight_));
  const absl::Span<const uint8_t> retry =
      WriteHelloRetryRequest(hello_.legacy_session_id, choice.suite, choice.group, {}, &writer);
  if (retry.empty() || !transcript_.Add(retry)) {
    return Fail(SessionError::kInternal, AlertDescription::kInternalError, "HelloRetryRequest");
  }
  AppendPlaintextRecord(kContentHandshake, retry);
  // Appendix D.4: in middlebox compatibility mode (a session id offered) the server's first
  // handshake message is followed by one change_cipher_spec.
  if (!hello_.legacy_session_id.empty()) {
    const uint8_t one = 1;
    AppendPlaintextRecord(kContentChangeCipherSpec, {&one, 1});
  }
  retried_ = true;
  state_ = State::kSecondHello;
  return Status::kWantRead;
}

ServerSession::Status ServerSession::Serve(const Choice& choice, const HandshakeMessage& message) {
  suite_ = static_cast<CipherSuite>(choice.suite);
  group_ = choice.group;
  if ((!retried_ && !transcript_.Start(suite_)) || !schedule_.Start(suite_)) {
    return Fail(SessionError::kInternal, AlertDescription::kInternalError, "transcript");
  }
  if (gate_ != nullptr && !gate_->Admit(choice.offers_resumption)) {
    return Fail(SessionError::kRefused, AlertDescription::kHandshakeFailure, "handshake limit");
  }
  // §4.2.11.2: the binder covers the transcript up to the ClientHello's binders list.
  if (choice.offers_resumption) {
    const absl::Span<const uint8_t> body(message.body);
    uint8_t binder_hash[kMaxHashLength];
    const size_t h = HashLength(suite_);
    if (!AddHeaderToTranscript(message) ||
        !transcript_.Add(body.subspan(0, hello_.binders_offset)) ||
        !transcript_.CurrentHash({binder_hash, h}) ||
        !transcript_.Add(body.subspan(hello_.binders_offset))) {
      return Fail(SessionError::kInternal, AlertDescription::kInternalError, "transcript");
    }
    resumed_ = TryResume({binder_hash, h});
    if (error_ != SessionError::kNone) return Status::kFailed;
    if (!resumed_) {
      ticket_refused_ = true;
      // A made-up ticket must not buy a full handshake at the resumed price.
      if (gate_ != nullptr && !gate_->Admit(false)) {
        return Fail(SessionError::kRefused, AlertDescription::kHandshakeFailure, "handshake limit");
      }
    }
  } else if (!AddToTranscript(message)) {
    return Fail(SessionError::kInternal, AlertDescription::kInternalError, "transcript");
  }
  if (!resumed_ && !schedule_.SetEarlySecret({})) {
    return Fail(SessionError::kInternal, AlertDescription::kInternalError, "key schedule");
  }
  std::copy(choice.alpn.begin(), choice.alpn.end(), alpn_);
  alpn_length_ = choice.alpn.size();
  if (hello_.has_record_size_limit) {
    max_fragment_ = std::min<size_t>(kMaxPlaintext, hello_.record_size_limit - 1u);
  }
  // Every random byte of the handshake in one DRBG call (each call costs ~0.6 µs, whatever
  // its length): the ServerHello's random, the first ticket's age_add and IV, and the
  // private key of the worker's next X25519 share. From the private DRBG, as the key must be;
  // its other outputs being public reveals nothing of its state (SP 800-90A's DRBGs).
  uint8_t randoms[32 + kFirstTicketRandomLength + kNextKeySeedLength];
  if (RAND_priv_bytes(randoms, sizeof(randoms)) != 1) {
    return Fail(SessionError::kInternal, AlertDescription::kInternalError, "random");
  }
  std::memcpy(first_ticket_random_, randoms + 32, kFirstTicketRandomLength);
  first_ticket_random_ready_ = true;
  const absl::Span<const uint8_t> next_key_seed(randoms + 32 + kFirstTicketRandomLength,
                                                kNextKeySeedLength);
  uint8_t server_share[kMaxKeyShareLength];
  uint8_t shared_secret[kMaxSharedSecretLength];
  const KeyExchange::Result exchanged =
      key_exchange_->Exchange(group_, hello_.key_shares[choice.key_share_index].key_exchange,
                              server_share, shared_secret, next_key_seed);
  OPENSSL_cleanse(randoms + 32, sizeof(randoms) - 32);
  if (!exchanged.ok) {
    return Fail(SessionError::kProtocol, static_cast<AlertDescription>(exchanged.alert),
                "bad key share");
  }
  const bool sent = SendServerFlight(choice, absl::MakeConstSpan(randoms, 32),
                                     {shared_secret, exchanged.secret_length},
                                     {server_share, exchanged.share_length});
  OPENSSL_cleanse(shared_secret, sizeof(shared_secret));
  if (!sent) return Fail(SessionError::kInternal, AlertDescription::kInternalError, "flight");
  state_ = State::kClientFinished;
  return Status::kWantRead;
}

bool ServerSession::TryResume(absl::Span<const uint8_t> binder_hash) {
  if (ticket_sealer_ == nullptr) return false;
  TicketState ticket;
  // Only the first identity: we issue one ticket per connection and clients offer it first.
  if (!ticket_sealer_->Open(hello_.psk_identities[0].identity, NowUnixMs(), &ticket)) {
    return false;
  }
  // §4.2.11: the PSK's hash must be the suite's.
  const size_t h = HashLength(suite_);
  if (HashLength(ticket.suite) != h || ticket.psk_length != h) {
    OPENSSL_cleanse(&ticket, sizeof(ticket));
    return false;
  }
  uint8_t binder_key[kMaxHashLength];
  // The first binder: a 1-byte length, then the MAC (the parser checked the lengths).
  const absl::Span<const uint8_t> binder = hello_.binders.subspan(1, hello_.binders[0]);
  const bool ok = schedule_.SetEarlySecret({ticket.psk, h}) &&
                  schedule_.BinderKey(/*resumption=*/true, {binder_key, h});
  const bool valid = ok && schedule_.VerifyFinished({binder_key, h}, binder_hash, binder);
  OPENSSL_cleanse(binder_key, sizeof(binder_key));
  OPENSSL_cleanse(&ticket, sizeof(ticket));
  if (!ok) {
    Fail(SessionError::kInternal, AlertDescription::kInternalError, "binder key");
    return false;
  }
  if (!valid) {  // §4.2.11: a binder that does not validate ends the handshake
    Fail(SessionError::kProtocol, AlertDescription::kDecryptError, "PSK binder mismatch");
    return false;
  }
  return true;
}

bool ServerSession::SendServerFlight(const Choice& choice, absl::Span<const uint8_t> server_random,
                                     absl::Span<const uint8_t> shared_secret,
                                     absl::Span<const uint8_t> server_share) {
  const size_t h = HashLength(suite_);
  MessageWriter writer(absl::MakeSpan(flight_));
  ServerHelloFields fields;
  fields.random = server_random;
  fields.legacy_session_id = hello_.legacy_session_id;
  fields.cipher_suite = static_cast<uint16_t>(suite_);
  fields.key_share_group = group_;
  fields.key_share = server_share;
  fields.has_psk = resumed_;
  fields.psk_identity = 0;
  const absl::Span<const uint8_t> server_hello = WriteServerHello(fields, &writer);
  if (server_hello.empty() || !transcript_.Add(server_hello)) return false;
  AppendPlaintextRecord(kContentHandshake, server_hello);
  if (!retried_ && !hello_.legacy_session_id.empty()) {  // Appendix D.4, as in SendRetry
    const uint8_t one = 1;
    AppendPlaintextRecord(kContentChangeCipherSpec, {&one, 1});
  }

  uint8_t hash[kMaxHashLength];
  uint8_t server_secret[kMaxHashLength];
  bool ok = transcript_.CurrentHash({hash, h}) && schedule_.SetHandshakeSecret(shared_secret) &&
            schedule_.HandshakeTrafficSecrets({hash, h}, {client_handshake_secret_, h},
                                              {server_secret, h}) &&
            InstallKeys(RecordProtection::Direction::kSeal, {server_secret, h}, seal_) &&
            InstallKeys(RecordProtection::Direction::kOpen, {client_handshake_secret_, h}, open_);
  sealing_ = ok;

  // EncryptedExtensions, Certificate, CertificateVerify, Finished: one protected flight.
  encrypted_flight_.clear();
  auto add = [&](absl::Span<const uint8_t> message) {
    ok = ok && !message.empty() && transcript_.Add(message);
    if (ok) encrypted_flight_.insert(encrypted_flight_.end(), message.begin(), message.end());
  };
  EncryptedExtensionsFields extensions;
  extensions.alpn_protocol = choice.alpn;
  extensions.record_size_limit = hello_.has_record_size_limit ? kOurRecordSizeLimit : 0;
  add(WriteEncryptedExtensions(extensions, &writer));
  if (!resumed_) {
    add(context_.certificate_message);
    uint8_t content[kMaxCertificateVerifyContent];
    uint8_t signature[CertificateSigner::kMaxSignatureLength];
    size_t content_length = 0;
    size_t signature_length = 0;
    ok = ok && transcript_.CurrentHash({hash, h});
    if (ok) content_length = ServerCertificateVerifyContent({hash, h}, content);
    if (content_length > 0) {
      signature_length = signer_->Sign({content, content_length}, signature);
    }
    ok = ok && signature_length > 0;
    if (ok) add(WriteCertificateVerify(signer_->scheme(), {signature, signature_length}, &writer));
  }
  uint8_t verify_data[kMaxHashLength];
  ok = ok && transcript_.CurrentHash({hash, h}) &&
       schedule_.FinishedVerifyData({server_secret, h}, {hash, h}, {verify_data, h});
  if (ok) add(WriteFinished({verify_data, h}, &writer));
  ok = ok && SealHandshake(encrypted_flight_);

  // §7.1: the application secrets follow the server's Finished; ours is in use from now on
  // (the tickets), the client's after its Finished.
  ok = ok && transcript_.CurrentHash({server_finished_hash_, h}) && schedule_.SetMasterSecret() &&
       schedule_.ApplicationTrafficSecrets({server_finished_hash_, h}, {client_app_secret_, h},
                                           {server_app_secret_, h}) &&
       InstallKeys(RecordProtection::Direction::kSeal, {server_app_secret_, h}, seal_);
  OPENSSL_cleanse(server_secret, sizeof(server_secret));
  OPENSSL_cleanse(verify_data, sizeof(verify_data));
  return ok;
}

ServerSession::Status ServerSession::OnClientFinished(const HandshakeMessage& message) {
  if (message.type != kFinished) {
    return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                "expected the client's Finished");
  }
  const size_t h = HashLength(suite_);
  absl::Span<const uint8_t> verify_data;
  if (!ParseFinished(message.body, h, &verify_data)) {
    return Fail(SessionError::kProtocol, AlertDescription::kDecodeError, "bad Finished length");
  }
  // §4.4.4: over Transcript-Hash(ClientHello..server Finished), compared in constant time.
  if (!schedule_.VerifyFinished({client_handshake_secret_, h}, {server_finished_hash_, h},
                                verify_data)) {
    return Fail(SessionError::kProtocol, AlertDescription::kDecryptError, "Finished mismatch");
  }
  if (!reader_.AtMessageBoundary()) {  // §5.1: the key change is at a record boundary
    return Fail(SessionError::kProtocol, AlertDescription::kUnexpectedMessage,
                "data after the client's Finished");
  }
  OPENSSL_cleanse(client_handshake_secret_, sizeof(client_handshake_secret_));
  if (!AddToTranscript(message) ||
      !InstallKeys(RecordProtection::Direction::kOpen, {client_app_secret_, h}, open_) ||
      !SendTickets()) {
    return Fail(SessionError::kInternal, AlertDescription::kInternalError, "after Finished");
  }
  state_ = State::kConnected;
  return Status::kConnected;
}

bool ServerSession::SendTickets() {
  const int count = context_.policy->tickets_per_handshake;
  if (ticket_sealer_ == nullptr || count <= 0) return true;
  const size_t h = HashLength(suite_);
  uint8_t hash[kMaxHashLength];
  uint8_t resumption_master[kMaxHashLength];
  bool ok = transcript_.CurrentHash({hash, h}) &&
            schedule_.ResumptionMasterSecret({hash, h}, {resumption_master, h});
  TicketState state;
  uint8_t sealed[kMaxTicketLength];
  for (int i = 0; ok && i < count; ++i) {
    // §4.6.1: a nonce unique per ticket of the connection makes each PSK distinct.
    const uint8_t nonce = static_cast<uint8_t>(i);
    ok = schedule_.ResumptionPsk({resumption_master, h}, {&nonce, 1}, {state.psk, h});
    state.suite = suite_;
    state.psk_length = static_cast<uint8_t>(h);
    state.issued_unix_ms = NowUnixMs();
    state.lifetime_seconds = context_.policy->ticket_lifetime_seconds;
    uint8_t drawn[kFirstTicketRandomLength] = {};  // age_add, then the IV
    if (i == 0 && first_ticket_random_ready_) {
      std::memcpy(drawn, first_ticket_random_, sizeof(drawn));
      OPENSSL_cleanse(first_ticket_random_, sizeof(first_ticket_random_));
      first_ticket_random_ready_ = false;
    } else {
      ok = ok && RAND_bytes(drawn, sizeof(drawn)) == 1;
    }
    std::memcpy(&state.age_add, drawn, sizeof(state.age_add));
    const size_t alpn_length = std::min(alpn_length_, sizeof(state.alpn));
    std::memcpy(state.alpn, alpn_, alpn_length);
    state.alpn_length = static_cast<uint8_t>(alpn_length);
    const size_t sealed_length =
        ok ? ticket_sealer_->Seal(
                 state, absl::MakeConstSpan(drawn + sizeof(state.age_add), kTicketIvLength), sealed)
           : 0;
    OPENSSL_cleanse(drawn, sizeof(drawn));
    ok = sealed_length > 0;
    if (ok) {
      MessageWriter writer(absl::MakeSpan(flight_));
      const absl::Span<const uint8_t> ticket = WriteNewSessionTicket(
          state.lifetime_seconds, state.age_add, {&nonce, 1}, {sealed, sealed_length}, &writer);
      ok = !ticket.empty() && SealHandshake(ticket);
    }
  }
  OPENSSL_cleanse(resumption_master, sizeof(resumption_master));
  OPENSSL_cleanse(&state, sizeof(state));
  return ok;
}

}  // namespace onepass::tls::tls13
