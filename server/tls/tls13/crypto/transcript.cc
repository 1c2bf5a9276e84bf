#include "server/tls/tls13/crypto/transcript.h"

namespace onepass::tls::tls13 {

bool Transcript::Start(CipherSuite suite) {
  md_ = algorithms_.Md(suite);
  hash_length_ = HashLength(suite);
  return ctx_ && scratch_ && md_ != nullptr && EVP_DigestInit_ex2(ctx_.get(), md_, nullptr) == 1;
}

bool Transcript::Add(absl::Span<const uint8_t> bytes) {
  return md_ != nullptr && EVP_DigestUpdate(ctx_.get(), bytes.data(), bytes.size()) == 1;
}

bool Transcript::CurrentHash(absl::Span<uint8_t> out) {
  // Finalising a copy keeps the running context open for the messages that follow.
  if (md_ == nullptr || out.size() < hash_length_ ||
      EVP_MD_CTX_copy_ex(scratch_.get(), ctx_.get()) != 1) {
    return false;
  }
  unsigned int len = 0;
  return EVP_DigestFinal_ex(scratch_.get(), out.data(), &len) == 1 && len == hash_length_;
}

bool Transcript::ReplaceWithMessageHash() {
  uint8_t message[4 + kMaxHashLength];
  message[0] = 254;  // HandshakeType message_hash, §4
  message[1] = 0;
  message[2] = 0;
  message[3] = static_cast<uint8_t>(hash_length_);
  if (!CurrentHash(absl::MakeSpan(message + 4, hash_length_)) ||
      EVP_DigestInit_ex2(ctx_.get(), md_, nullptr) != 1) {
    return false;
  }
  return Add(absl::MakeConstSpan(message, 4 + hash_length_));
}

}  // namespace onepass::tls::tls13
