// The three TLS 1.3 cipher suites (RFC 8446 §B.4) and the libcrypto algorithms behind them,
// fetched once (OpenSSL 3.0 implicit fetching costs a provider lookup per call).
#ifndef ONEPASS_SERVER_TLS_TLS13_CRYPTO_CIPHER_SUITE_H_
#define ONEPASS_SERVER_TLS_TLS13_CRYPTO_CIPHER_SUITE_H_

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace onepass::tls::tls13 {

enum class CipherSuite : uint16_t {
  kAes128GcmSha256 = 0x1301,
  kAes256GcmSha384 = 0x1302,
  kChaCha20Poly1305Sha256 = 0x1303,
};

inline constexpr size_t kMaxHashLength = 48;  // SHA-384
inline constexpr size_t kMaxKeyLength = 32;
inline constexpr size_t kIvLength = 12;   // RFC 8446 §5.3: iv_length = max(8, N_MIN) = 12
inline constexpr size_t kTagLength = 16;  // all three AEADs

// True for the three values above.
bool IsKnownSuite(uint16_t value);
size_t HashLength(CipherSuite suite);
size_t KeyLength(CipherSuite suite);

struct EvpMdDeleter {
  void operator()(EVP_MD* md) const { EVP_MD_free(md); }
};
struct EvpCipherDeleter {
  void operator()(EVP_CIPHER* c) const { EVP_CIPHER_free(c); }
};
struct EvpMacDeleter {
  void operator()(EVP_MAC* m) const { EVP_MAC_free(m); }
};

// The fetched algorithms for every suite. Made once per engine (or thread) and read-only
// afterwards: EVP_MD/EVP_CIPHER/EVP_MAC objects are reference-counted and safe to share
// between threads once fetched. Create() returns null when a provider lacks one.
class SuiteAlgorithms {
 public:
  static std::unique_ptr<SuiteAlgorithms> Create();

  const EVP_MD* Md(CipherSuite suite) const;
  const EVP_CIPHER* Cipher(CipherSuite suite) const;
  EVP_MAC* Hmac() const { return hmac_.get(); }

 private:
  SuiteAlgorithms() = default;
  std::unique_ptr<EVP_MD, EvpMdDeleter> sha256_, sha384_;
  std::unique_ptr<EVP_CIPHER, EvpCipherDeleter> aes128gcm_, aes256gcm_, chacha_;
  std::unique_ptr<EVP_MAC, EvpMacDeleter> hmac_;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_CRYPTO_CIPHER_SUITE_H_
