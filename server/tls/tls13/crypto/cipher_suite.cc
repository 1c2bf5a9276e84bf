#include "server/tls/tls13/crypto/cipher_suite.h"

namespace onepass::tls::tls13 {

bool IsKnownSuite(uint16_t value) { return value >= 0x1301 && value <= 0x1303; }

size_t HashLength(CipherSuite suite) { return suite == CipherSuite::kAes256GcmSha384 ? 48 : 32; }

size_t KeyLength(CipherSuite suite) { return suite == CipherSuite::kAes128GcmSha256 ? 16 : 32; }

std::unique_ptr<SuiteAlgorithms> SuiteAlgorithms::Create() {
  std::unique_ptr<SuiteAlgorithms> a(new SuiteAlgorithms());
  a->sha256_.reset(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  a->sha384_.reset(EVP_MD_fetch(nullptr, "SHA384", nullptr));
  a->aes128gcm_.reset(EVP_CIPHER_fetch(nullptr, "AES-128-GCM", nullptr));
  a->aes256gcm_.reset(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr));
  a->chacha_.reset(EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr));
  a->hmac_.reset(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  if (!a->sha256_ || !a->sha384_ || !a->aes128gcm_ || !a->aes256gcm_ || !a->chacha_ || !a->hmac_) {
    return nullptr;
  }
  return a;
}

const EVP_MD* SuiteAlgorithms::Md(CipherSuite suite) const {
  return suite == CipherSuite::kAes256GcmSha384 ? sha384_.get() : sha256_.get();
}

const EVP_CIPHER* SuiteAlgorithms::Cipher(CipherSuite suite) const {
  switch (suite) {
    case CipherSuite::kAes128GcmSha256:
      return aes128gcm_.get();
    case CipherSuite::kAes256GcmSha384:
      return aes256gcm_.get();
    case CipherSuite::kChaCha20Poly1305Sha256:
      return chacha_.get();
  }
  return nullptr;
}

}  // namespace onepass::tls::tls13
