// The server's CertificateVerify signature (RFC 8446 §4.4.3) with the certificate's key.
//
// ECDSA P-256 with SHA-256 (ecdsa_secp256r1_sha256, 0x0403) only: the key the engine serves.
// The content is hashed on one reused EVP_MD_CTX (SHA-256 fetched once) and the digest
// signed on one EVP_PKEY_CTX initialised once (EVP_PKEY_sign_init + the signature digest) and
// reused for every signature. Chosen over EVP_DigestSign, which OpenSSL's TLS calls on a
// fresh EVP_MD_CTX per handshake: EVP_DigestSignInit_ex fetches the digest and the signature
// by name and makes the provider contexts, and in OpenSSL 3.0 EVP_DigestSignFinal
// duplicates the signing context to keep the original reusable. Both produce the same
// signature: ECDSA over SHA-256(content). Measured (key_exchange.h has the table): 31.6 µs
// and 42 libcrypto allocations per signature here, 37.8 µs and 60 through EVP_DigestSign.
#ifndef ONEPASS_SERVER_TLS_TLS13_CRYPTO_CERTIFICATE_SIGNER_H_
#define ONEPASS_SERVER_TLS_TLS13_CRYPTO_CERTIFICATE_SIGNER_H_

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/types/span.h"
#include "server/tls/tls13/crypto/cipher_suite.h"
#include "server/tls/tls13/crypto/key_exchange.h"
#include "server/tls/tls13/crypto/transcript.h"

namespace onepass::tls::tls13 {

// Made once per worker from the context's key (EVP_PKEY, up-ref'd: the caller may free its
// reference); not thread-safe. Several workers' signers may share one EVP_PKEY: signing
// only reads it.
class CertificateSigner {
 public:
  // ECDSA P-256 is what the engine serves; any other key type (or a key without its private
  // half) returns null with *why set (e.g. "RSA keys are served by the OpenSSL engine"), so
  // the caller falls back. `why` may be null.
  static std::unique_ptr<CertificateSigner> Create(EVP_PKEY* key, std::string* why);

  static constexpr uint16_t kScheme = 0x0403;  // ecdsa_secp256r1_sha256, §4.2.3
  uint16_t scheme() const { return kScheme; }
  static constexpr size_t kMaxSignatureLength = 72;  // DER ECDSA P-256

  // The DER signature of `content` (the §4.4.3 octets: 64 spaces, the context string, 0,
  // the transcript hash) into `signature` (≥ kMaxSignatureLength); its length, 0 on failure
  // (the thread's libcrypto error queue is then left empty).
  size_t Sign(absl::Span<const uint8_t> content, absl::Span<uint8_t> signature);

 private:
  CertificateSigner() = default;

  EvpPkeyPtr key_;
  std::unique_ptr<EVP_MD, EvpMdDeleter> sha256_;
  std::unique_ptr<EVP_MD_CTX, EvpMdCtxDeleter> digest_;
  EvpPkeyCtxPtr sign_;  // EVP_PKEY_sign_init'd once, for key_
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_CRYPTO_CERTIFICATE_SIGNER_H_
