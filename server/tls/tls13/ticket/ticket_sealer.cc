// TicketSealer: the ticket's plaintext layout (session_ticket.h) and AES-256-GCM over it.
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstring>

#include "server/tls/tls13/ticket/session_ticket.h"

namespace onepass::tls::tls13 {
namespace {

// Offsets in the plaintext (see kTicketPlaintextLength).
constexpr size_t kVersionAt = 0;
constexpr size_t kSuiteAt = 1;
constexpr size_t kIssuedAt = 3;
constexpr size_t kLifetimeAt = 11;
constexpr size_t kAgeAddAt = 15;
constexpr size_t kPskLengthAt = 19;
constexpr size_t kPskAt = 20;
constexpr size_t kAlpnLengthAt = kPskAt + kMaxHashLength;
constexpr size_t kAlpnAt = kAlpnLengthAt + 1;
constexpr size_t kAlpnCapacity = sizeof(TicketState::alpn);
static_assert(kAlpnAt + kAlpnCapacity == kTicketPlaintextLength);

constexpr size_t kIvAt = kTicketNameLength;
constexpr size_t kCiphertextAt = kIvAt + kTicketIvLength;
constexpr size_t kTagAt = kCiphertextAt + kTicketPlaintextLength;

void StoreBigEndian(uint64_t value, size_t bytes, uint8_t* out) {
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * (bytes - 1 - i)));
}

uint64_t LoadBigEndian(const uint8_t* in, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value = value << 8 | in[i];
  return value;
}

bool AllZero(const uint8_t* p, size_t n) {
  uint8_t any = 0;
  for (size_t i = 0; i < n; ++i) any |= p[i];
  return any == 0;
}

// The rules a state must keep to be sealed, and that an opened one is checked against again.
bool StateIsSound(const TicketState& s) {
  const auto suite = static_cast<uint16_t>(s.suite);
  return IsKnownSuite(suite) && s.psk_length == HashLength(s.suite) &&
         s.alpn_length <= kAlpnCapacity && s.lifetime_seconds <= kMaxTicketLifetimeSeconds;
}

// Bytes of `s` past its lengths are not encoded: the plaintext holds zeros there.
void Encode(const TicketState& s, uint8_t* p) {
  std::memset(p, 0, kTicketPlaintextLength);
  p[kVersionAt] = kTicketFormatVersion;
  StoreBigEndian(static_cast<uint16_t>(s.suite), 2, p + kSuiteAt);
  StoreBigEndian(s.issued_unix_ms, 8, p + kIssuedAt);
  StoreBigEndian(s.lifetime_seconds, 4, p + kLifetimeAt);
  StoreBigEndian(s.age_add, 4, p + kAgeAddAt);
  p[kPskLengthAt] = s.psk_length;
  std::memcpy(p + kPskAt, s.psk, s.psk_length);
  p[kAlpnLengthAt] = s.alpn_length;
  std::memcpy(p + kAlpnAt, s.alpn, s.alpn_length);
}

// The plaintext's fields into *s, false when any rule of the format is broken. Only reached
// after the tag verified, so these refusals guard against our own past or future versions
// (and other hosts' bugs), not against forgeries.
bool Decode(const uint8_t* p, TicketState* s) {
  if (p[kVersionAt] != kTicketFormatVersion) return false;
  const auto suite = static_cast<uint16_t>(LoadBigEndian(p + kSuiteAt, 2));
  if (!IsKnownSuite(suite)) return false;
  s->suite = static_cast<CipherSuite>(suite);
  s->issued_unix_ms = LoadBigEndian(p + kIssuedAt, 8);
  s->lifetime_seconds = static_cast<uint32_t>(LoadBigEndian(p + kLifetimeAt, 4));
  s->age_add = static_cast<uint32_t>(LoadBigEndian(p + kAgeAddAt, 4));
  s->psk_length = p[kPskLengthAt];
  s->alpn_length = p[kAlpnLengthAt];
  if (!StateIsSound(*s)) return false;
  // One encoding per state: what lies past the lengths must be zero.
  if (!AllZero(p + kPskAt + s->psk_length, kMaxHashLength - s->psk_length) ||
      !AllZero(p + kAlpnAt + s->alpn_length, kAlpnCapacity - s->alpn_length)) {
    return false;
  }
  std::memcpy(s->psk, p + kPskAt, kMaxHashLength);
  std::memcpy(s->alpn, p + kAlpnAt, kAlpnCapacity);
  return true;
}

// Live at now: issued no later than kMaxIssueSkewMs ahead of now, and no older than its
// lifetime (RFC 8446 §4.6.1: not to be used past ticket_lifetime). Written without sums that
// could overflow, since issued_unix_ms is whatever a sealing host's clock said.
bool IsLive(const TicketState& s, uint64_t now_unix_ms) {
  if (s.issued_unix_ms > now_unix_ms) return s.issued_unix_ms - now_unix_ms <= kMaxIssueSkewMs;
  return now_unix_ms - s.issued_unix_ms <= uint64_t{s.lifetime_seconds} * 1000;
}

}  // namespace

TicketSealer::TicketSealer(const TicketKeyring& keyring)
    : keyring_(keyring), ctx_(EVP_CIPHER_CTX_new()) {
  // The cipher is set once; each Seal/Open then only sets key, IV and direction. GCM's default
  // IV length is the 12 bytes we use.
  if (ctx_ && EVP_CipherInit_ex2(ctx_.get(), keyring.cipher(), nullptr, nullptr, 1, nullptr) != 1) {
    ctx_.reset();
  }
}

TicketSealer::~TicketSealer() {
  if (ctx_) EVP_CIPHER_CTX_reset(ctx_.get());  // frees and cleanses the AES key schedule
}

size_t TicketSealer::Seal(const TicketState& state, absl::Span<uint8_t> out) {
  uint8_t iv[kTicketIvLength];
  if (RAND_bytes(iv, sizeof(iv)) != 1) return 0;
  return Seal(state, iv, out);
}

size_t TicketSealer::Seal(const TicketState& state, absl::Span<const uint8_t> iv,
                          absl::Span<uint8_t> out) {
  if (!ctx_ || out.size() < kTicketLength || iv.size() != kTicketIvLength || !StateIsSound(state)) {
    return 0;
  }
  const TicketKeyring::Entry& key = keyring_.newest();
  uint8_t* t = out.data();
  std::memcpy(t, key.name, kTicketNameLength);
  std::memcpy(t + kIvAt, iv.data(), kTicketIvLength);
  uint8_t plaintext[kTicketPlaintextLength];
  Encode(state, plaintext);
  int len = 0, final_len = 0;
  const bool ok =
      EVP_CipherInit_ex2(ctx_.get(), nullptr, key.key, t + kIvAt, 1, nullptr) == 1 &&
      EVP_CipherUpdate(ctx_.get(), nullptr, &len, t, kTicketNameLength) == 1 &&  // AAD
      EVP_CipherUpdate(ctx_.get(), t + kCiphertextAt, &len, plaintext,
                       static_cast<int>(kTicketPlaintextLength)) == 1 &&
      static_cast<size_t>(len) == kTicketPlaintextLength &&
      EVP_CipherFinal_ex(ctx_.get(), t + kCiphertextAt + len, &final_len) == 1 && final_len == 0 &&
      EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG, kTicketTagLength, t + kTagAt) == 1;
  OPENSSL_cleanse(plaintext, sizeof(plaintext));
  return ok ? kTicketLength : 0;
}

bool TicketSealer::Open(absl::Span<const uint8_t> ticket, uint64_t now_unix_ms,
                        TicketState* state) {
  // The length first: an OpenSSL ticket under the same file (same name prefix) or any other
  // stranger is turned away here before any cryptography, and ours are all one length.
  if (!ctx_ || ticket.size() != kTicketLength) return false;
  const uint8_t* t = ticket.data();
  const TicketKeyring::Entry* key = keyring_.Find(t);
  if (key == nullptr) return false;  // a retired key or none of ours: a full handshake
  uint8_t plaintext[kTicketPlaintextLength];
  int len = 0, final_len = 0;
  // EVP_CipherFinal_ex checks the tag (in constant time); until it has, plaintext is
  // unauthenticated and is wiped unread on failure.
  bool ok = EVP_CipherInit_ex2(ctx_.get(), nullptr, key->key, t + kIvAt, 0, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, kTicketTagLength,
                                const_cast<uint8_t*>(t + kTagAt)) == 1 &&
            EVP_CipherUpdate(ctx_.get(), nullptr, &len, t, kTicketNameLength) == 1 &&
            EVP_CipherUpdate(ctx_.get(), plaintext, &len, t + kCiphertextAt,
                             static_cast<int>(kTicketPlaintextLength)) == 1 &&
            static_cast<size_t>(len) == kTicketPlaintextLength &&
            EVP_CipherFinal_ex(ctx_.get(), plaintext + len, &final_len) == 1;
  TicketState opened;
  ok = ok && Decode(plaintext, &opened) && IsLive(opened, now_unix_ms);
  if (ok) *state = opened;
  OPENSSL_cleanse(plaintext, sizeof(plaintext));
  OPENSSL_cleanse(&opened, sizeof(opened));
  return ok;
}

}  // namespace onepass::tls::tls13
