#include "server/tls/tls13/crypto/key_schedule.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/params.h>

#include <algorithm>
#include <cstring>

namespace onepass::tls::tls13 {
namespace {

constexpr std::string_view kLabelPrefix = "tls13 ";
// HkdfLabel.label is <7..255>; ours are short literals. The longest label in RFC 8446 is
// "exp master" / "traffic upd" (11 bytes); 64 leaves room for exporter labels later.
constexpr size_t kMaxLabel = 64;
constexpr size_t kMaxContext = 255;  // HkdfLabel.context is <0..255>

}  // namespace

KeySchedule::KeySchedule(const SuiteAlgorithms& algorithms) : algorithms_(algorithms) {
  ready_ = InitMac(sha256_, CipherSuite::kAes128GcmSha256) &&
           InitMac(sha384_, CipherSuite::kAes256GcmSha384);
  Wipe();
}

KeySchedule::~KeySchedule() { Wipe(); }

bool KeySchedule::InitMac(Mac& mac, CipherSuite suite) {
  const EVP_MD* md = algorithms_.Md(suite);
  mac.ctx.reset(EVP_MAC_CTX_new(algorithms_.Hmac()));
  if (!mac.ctx || md == nullptr) return false;
  OSSL_PARAM params[2];
  params[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                               const_cast<char*>(EVP_MD_get0_name(md)), 0);
  params[1] = OSSL_PARAM_construct_end();
  unsigned int len = 0;
  if (EVP_MAC_CTX_set_params(mac.ctx.get(), params) != 1 ||
      EVP_Digest(nullptr, 0, mac.empty_hash, &len, md, nullptr) != 1 || len != HashLength(suite)) {
    return false;
  }
  // The constants through the schedule's own steps, before any handshake uses them.
  static constexpr uint8_t kZeros[kMaxHashLength] = {};
  if (!Select(suite)) return false;
  mac.constants =
      Extract({}, ConstBytes(kZeros, hash_length_), MutableBytes(mac.zero_early, hash_length_)) &&
      DeriveSecret(Secret(mac.zero_early), "derived", Secret(mac.empty_hash),
                   MutableBytes(mac.zero_derived, hash_length_));
  return mac.constants;
}

bool KeySchedule::Select(CipherSuite suite) {
  suite_ = suite;
  hash_length_ = HashLength(suite);
  mac_ = suite == CipherSuite::kAes256GcmSha384 ? &sha384_ : &sha256_;
  return mac_->ctx != nullptr;
}

void KeySchedule::Wipe() {
  OPENSSL_cleanse(early_, sizeof(early_));
  OPENSSL_cleanse(handshake_, sizeof(handshake_));
  OPENSSL_cleanse(master_, sizeof(master_));
  for (Mac* mac : {&sha256_, &sha384_}) {
    OPENSSL_cleanse(mac->keyed, sizeof(mac->keyed));
    mac->keyed_length = 0;
  }
  early_without_psk_ = false;
  stage_ = Stage::kNone;
}

bool KeySchedule::Start(CipherSuite suite) {
  Wipe();
  return ready_ && Select(suite);
}

bool KeySchedule::Hmac(ConstBytes key, ConstBytes a, ConstBytes b, ConstBytes c, MutableBytes out) {
  // EVP_MAC_init rejects a null key; HKDF-Extract's zero-length salt (RFC 5869 §2.2 says
  // a missing salt is HashLen zeros, which HMAC pads to the same block) is passed as zeros.
  static constexpr uint8_t kZeros[kMaxHashLength] = {};
  if (key.empty()) key = ConstBytes(kZeros, hash_length_);
  // The key the context holds: restarted from it (EVP_MAC_init with no key reuses it), the
  // comparison in constant time as for any secret. Every key of the schedule is one hash
  // long; a longer one (a test's) is never remembered.
  Mac& mac = *mac_;
  const bool same =
      key.size() == mac.keyed_length && CRYPTO_memcmp(key.data(), mac.keyed, key.size()) == 0;
  EVP_MAC_CTX* ctx = mac.ctx.get();
  size_t len = 0;
  const bool keyed = same ? EVP_MAC_init(ctx, nullptr, 0, nullptr) == 1
                          : EVP_MAC_init(ctx, key.data(), key.size(), nullptr) == 1;
  if (!same) {
    mac.keyed_length = 0;
    if (keyed && key.size() <= sizeof(mac.keyed)) {
      std::memcpy(mac.keyed, key.data(), key.size());
      mac.keyed_length = key.size();
    }
  }
  return keyed && EVP_MAC_update(ctx, a.data(), a.size()) == 1 &&
         EVP_MAC_update(ctx, b.data(), b.size()) == 1 &&
         EVP_MAC_update(ctx, c.data(), c.size()) == 1 &&
         EVP_MAC_final(ctx, out.data(), &len, out.size()) == 1 && len == hash_length_;
}

bool KeySchedule::Extract(ConstBytes salt, ConstBytes ikm, MutableBytes out) {
  // RFC 5869 §2.2: PRK = HMAC-Hash(salt, IKM).
  if (out.size() < hash_length_) return false;
  return Hmac(salt, ikm, {}, {}, out.first(hash_length_));
}

bool KeySchedule::ExpandLabel(ConstBytes secret, std::string_view label, ConstBytes context,
                              MutableBytes out) {
  // §7.1: HkdfLabel = uint16 length | opaque label<7..255> = "tls13 " + Label |
  // opaque context<0..255>, built on the stack.
  if (label.size() > kMaxLabel || context.size() > kMaxContext || out.empty() ||
      out.size() > 255 * hash_length_) {
    return false;
  }
  uint8_t info[2 + 1 + kLabelPrefix.size() + kMaxLabel + 1 + kMaxContext];
  size_t n = 0;
  info[n++] = static_cast<uint8_t>(out.size() >> 8);
  info[n++] = static_cast<uint8_t>(out.size());
  info[n++] = static_cast<uint8_t>(kLabelPrefix.size() + label.size());
  std::memcpy(info + n, kLabelPrefix.data(), kLabelPrefix.size());
  n += kLabelPrefix.size();
  std::memcpy(info + n, label.data(), label.size());
  n += label.size();
  info[n++] = static_cast<uint8_t>(context.size());
  if (!context.empty()) std::memcpy(info + n, context.data(), context.size());
  n += context.size();
  // RFC 5869 §2.3: T(i) = HMAC(PRK, T(i-1) | info | i); one block covers every TLS 1.3 use.
  uint8_t block[kMaxHashLength];
  size_t done = 0;
  bool ok = true;
  for (uint8_t i = 1; ok && done < out.size(); ++i) {
    ConstBytes previous = i == 1 ? ConstBytes() : ConstBytes(block, hash_length_);
    ok = Hmac(secret, previous, ConstBytes(info, n), ConstBytes(&i, 1),
              MutableBytes(block, hash_length_));
    size_t take = std::min(hash_length_, out.size() - done);
    if (ok) std::memcpy(out.data() + done, block, take);
    done += take;
  }
  OPENSSL_cleanse(block, sizeof(block));
  return ok;
}

bool KeySchedule::DeriveSecret(ConstBytes secret, std::string_view label,
                               ConstBytes transcript_hash, MutableBytes out) {
  if (out.size() < hash_length_ || transcript_hash.size() != hash_length_) return false;
  return ExpandLabel(secret, label, transcript_hash, out.first(hash_length_));
}

bool KeySchedule::SetEarlySecret(ConstBytes psk) {
  if (hash_length_ == 0 || mac_ == nullptr) return false;
  if (psk.empty()) {  // a full handshake: HKDF-Extract(0, 0), the same every time
    std::memcpy(early_, mac_->zero_early, hash_length_);
    early_without_psk_ = true;
  } else {
    if (!Extract({}, psk, MutableBytes(early_, hash_length_))) return false;
    early_without_psk_ = false;
  }
  stage_ = Stage::kEarly;
  return true;
}

bool KeySchedule::BinderKey(bool resumption, MutableBytes out) {
  if (stage_ != Stage::kEarly) return false;
  return DeriveSecret(Secret(early_), resumption ? "res binder" : "ext binder",
                      Secret(mac_->empty_hash), out);
}

bool KeySchedule::SetHandshakeSecret(ConstBytes shared_secret) {
  if (stage_ != Stage::kEarly) return false;
  uint8_t derived[kMaxHashLength];
  bool ok = true;
  if (early_without_psk_) {
    std::memcpy(derived, mac_->zero_derived, hash_length_);
  } else {
    ok = DeriveSecret(Secret(early_), "derived", Secret(mac_->empty_hash),
                      MutableBytes(derived, hash_length_));
  }
  ok = ok && Extract(ConstBytes(derived, hash_length_), shared_secret,
                     MutableBytes(handshake_, hash_length_));
  OPENSSL_cleanse(derived, sizeof(derived));
  // The early secret is done with once the handshake secret exists (0-RTT keys come first).
  OPENSSL_cleanse(early_, sizeof(early_));
  stage_ = ok ? Stage::kHandshake : Stage::kNone;
  return ok;
}

bool KeySchedule::HandshakeTrafficSecrets(ConstBytes hello_hash, MutableBytes client,
                                          MutableBytes server) {
  if (stage_ != Stage::kHandshake) return false;
  return DeriveSecret(Secret(handshake_), "c hs traffic", hello_hash, client) &&
         DeriveSecret(Secret(handshake_), "s hs traffic", hello_hash, server);
}

bool KeySchedule::SetMasterSecret() {
  if (stage_ != Stage::kHandshake) return false;
  static constexpr uint8_t kZeros[kMaxHashLength] = {};
  uint8_t derived[kMaxHashLength];
  bool ok = DeriveSecret(Secret(handshake_), "derived", Secret(mac_->empty_hash),
                         MutableBytes(derived, hash_length_)) &&
            Extract(ConstBytes(derived, hash_length_), ConstBytes(kZeros, hash_length_),
                    MutableBytes(master_, hash_length_));
  OPENSSL_cleanse(derived, sizeof(derived));
  OPENSSL_cleanse(handshake_, sizeof(handshake_));
  stage_ = ok ? Stage::kMaster : Stage::kNone;
  return ok;
}

bool KeySchedule::ApplicationTrafficSecrets(ConstBytes server_finished_hash, MutableBytes client,
                                            MutableBytes server) {
  if (stage_ != Stage::kMaster) return false;
  return DeriveSecret(Secret(master_), "c ap traffic", server_finished_hash, client) &&
         DeriveSecret(Secret(master_), "s ap traffic", server_finished_hash, server);
}

bool KeySchedule::ResumptionMasterSecret(ConstBytes client_finished_hash, MutableBytes out) {
  if (stage_ != Stage::kMaster) return false;
  return DeriveSecret(Secret(master_), "res master", client_finished_hash, out);
}

bool KeySchedule::FinishedVerifyData(ConstBytes base_key, ConstBytes transcript_hash,
                                     MutableBytes out) {
  if (out.size() < hash_length_ || transcript_hash.size() != hash_length_) return false;
  uint8_t finished_key[kMaxHashLength];
  bool ok = ExpandLabel(base_key, "finished", {}, MutableBytes(finished_key, hash_length_)) &&
            Hmac(ConstBytes(finished_key, hash_length_), transcript_hash, {}, {},
                 out.first(hash_length_));
  OPENSSL_cleanse(finished_key, sizeof(finished_key));
  return ok;
}

bool KeySchedule::VerifyFinished(ConstBytes base_key, ConstBytes transcript_hash,
                                 ConstBytes received) {
  uint8_t expected[kMaxHashLength];
  bool ok = received.size() == hash_length_ &&
            FinishedVerifyData(base_key, transcript_hash, MutableBytes(expected, hash_length_)) &&
            CRYPTO_memcmp(expected, received.data(), hash_length_) == 0;
  OPENSSL_cleanse(expected, sizeof(expected));
  return ok;
}

bool KeySchedule::ResumptionPsk(ConstBytes resumption_master_secret, ConstBytes ticket_nonce,
                                MutableBytes out) {
  if (out.size() < hash_length_) return false;
  return ExpandLabel(resumption_master_secret, "resumption", ticket_nonce, out.first(hash_length_));
}

bool KeySchedule::TrafficKeys(ConstBytes secret, MutableBytes key, MutableBytes iv) {
  size_t key_length = KeyLength(suite_);
  if (key.size() < key_length || iv.size() < kIvLength) return false;
  return ExpandLabel(secret, "key", {}, key.first(key_length)) &&
         ExpandLabel(secret, "iv", {}, iv.first(kIvLength));
}

bool KeySchedule::NextTrafficSecret(ConstBytes secret, MutableBytes out) {
  if (out.size() < hash_length_) return false;
  return ExpandLabel(secret, "traffic upd", {}, out.first(hash_length_));
}

}  // namespace onepass::tls::tls13
