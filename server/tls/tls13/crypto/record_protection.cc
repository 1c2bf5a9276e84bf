#include "server/tls/tls13/crypto/record_protection.h"

#include <openssl/crypto.h>

#include <cstring>

namespace onepass::tls::tls13 {

bool RecordProtection::Init(const SuiteAlgorithms& algorithms, CipherSuite suite,
                            Direction direction, absl::Span<const uint8_t> key,
                            absl::Span<const uint8_t> iv) {
  Reset();
  const EVP_CIPHER* cipher = algorithms.Cipher(suite);
  if (!ctx_ || cipher == nullptr || key.size() != KeyLength(suite) || iv.size() != kIvLength) {
    return false;
  }
  // Key now, nonce per record: 12 bytes is the default IV length of all three AEADs.
  if (EVP_CipherInit_ex2(ctx_.get(), cipher, key.data(), nullptr,
                         direction == Direction::kSeal ? 1 : 0, nullptr) != 1) {
    return false;
  }
  std::memcpy(iv_, iv.data(), kIvLength);
  direction_ = direction;
  ready_ = true;
  return true;
}

void RecordProtection::Reset() {
  if (ctx_) EVP_CIPHER_CTX_reset(ctx_.get());  // frees and cleanses the key schedule
  OPENSSL_cleanse(iv_, sizeof(iv_));
  seq_ = 0;
  spent_ = false;
  ready_ = false;
}

void RecordProtection::Nonce(uint8_t nonce[kIvLength]) const {
  std::memcpy(nonce, iv_, kIvLength);
  for (int i = 0; i < 8; ++i) nonce[kIvLength - 1 - i] ^= static_cast<uint8_t>(seq_ >> (8 * i));
}

bool RecordProtection::Seal(uint8_t content_type, absl::Span<const uint8_t> plaintext,
                            size_t padding_len, std::vector<uint8_t>& out) {
  // §5.2: TLSInnerPlaintext is at most 2^14 + 1 bytes (content, type, padding).
  const size_t inner = plaintext.size() + 1 + padding_len;
  if (!ready_ || direction_ != Direction::kSeal || spent_ || inner > kMaxPlaintext + 1) {
    return false;
  }
  const size_t body = inner + kTagLength;
  const size_t start = out.size();
  out.resize(start + kRecordHeaderLength + body);
  uint8_t* header = out.data() + start;
  header[0] = kContentApplicationData;  // opaque_type, §5.2
  header[1] = 0x03;                     // legacy_record_version 0x0303
  header[2] = 0x03;
  header[3] = static_cast<uint8_t>(body >> 8);
  header[4] = static_cast<uint8_t>(body);
  uint8_t* p = header + kRecordHeaderLength;
  // Build the inner plaintext in place and encrypt it in place: one pass, no scratch.
  if (!plaintext.empty()) std::memmove(p, plaintext.data(), plaintext.size());
  p[plaintext.size()] = content_type;
  std::memset(p + plaintext.size() + 1, 0, padding_len);
  uint8_t nonce[kIvLength];
  Nonce(nonce);
  int len = 0;
  int final_len = 0;
  // The additional data is the record header (§5.2).
  bool ok = EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, nonce, 1, nullptr) == 1 &&
            EVP_CipherUpdate(ctx_.get(), nullptr, &len, header, kRecordHeaderLength) == 1 &&
            EVP_CipherUpdate(ctx_.get(), p, &len, p, static_cast<int>(inner)) == 1 &&
            EVP_CipherFinal_ex(ctx_.get(), p + len, &final_len) == 1 &&
            static_cast<size_t>(len + final_len) == inner &&
            EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_GET_TAG, kTagLength, p + inner) == 1;
  if (!ok) {
    out.resize(start);
    return false;
  }
  if (seq_ == UINT64_MAX) spent_ = true;
  ++seq_;
  return true;
}

OpenResult RecordProtection::Open(absl::Span<const uint8_t> record, std::vector<uint8_t>& out) {
  out.clear();
  if (!ready_ || direction_ != Direction::kOpen || spent_) return {false, kAlertInternalError};
  if (record.size() < kRecordHeaderLength) return {false, kAlertDecodeError};
  const uint8_t* header = record.data();
  const size_t body = (size_t{header[3]} << 8) | header[4];
  // §5.2: a protected record's opaque_type is always application_data.
  if (header[0] != kContentApplicationData) return {false, kAlertUnexpectedMessage};
  if (body > kMaxCiphertext) return {false, kAlertRecordOverflow};
  if (record.size() != kRecordHeaderLength + body) return {false, kAlertDecodeError};
  // Shorter than a tag and a type byte cannot authenticate (§5.2).
  if (body < kTagLength + 1) return {false, kAlertBadRecordMac};
  const size_t inner = body - kTagLength;
  const uint8_t* ciphertext = header + kRecordHeaderLength;
  out.resize(inner);
  uint8_t nonce[kIvLength];
  Nonce(nonce);
  int len = 0;
  int final_len = 0;
  bool ok =
      EVP_CipherInit_ex2(ctx_.get(), nullptr, nullptr, nonce, 0, nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx_.get(), EVP_CTRL_AEAD_SET_TAG, kTagLength,
                          const_cast<uint8_t*>(ciphertext + inner)) == 1 &&
      EVP_CipherUpdate(ctx_.get(), nullptr, &len, header, kRecordHeaderLength) == 1 &&
      EVP_CipherUpdate(ctx_.get(), out.data(), &len, ciphertext, static_cast<int>(inner)) == 1 &&
      EVP_CipherFinal_ex(ctx_.get(), out.data() + len, &final_len) == 1;
  if (!ok) {
    OPENSSL_cleanse(out.data(), out.size());
    out.clear();
    return {false, kAlertBadRecordMac};
  }
  if (seq_ == UINT64_MAX) spent_ = true;
  ++seq_;
  // §5.4: the type is the last non-zero byte; a record of only zeros is unexpected_message.
  size_t end = inner;
  while (end > 0 && out[end - 1] == 0) --end;
  if (end == 0) {
    out.clear();
    return {false, kAlertUnexpectedMessage};
  }
  const uint8_t type = out[end - 1];
  out.resize(end - 1);
  if (out.size() > kMaxPlaintext) return {false, kAlertRecordOverflow};  // §5.4
  return {true, 0, type};
}

}  // namespace onepass::tls::tls13
