#include "server/tls/tls13/crypto/certificate_signer.h"

#include <openssl/core_names.h>
#include <openssl/err.h>

#include <cstring>

namespace onepass::tls::tls13 {
namespace {

constexpr size_t kSha256Length = 32;

std::unique_ptr<CertificateSigner> Refuse(std::string* why, const char* reason) {
  ERR_clear_error();
  if (why != nullptr) *why = reason;
  return nullptr;
}

}  // namespace

std::unique_ptr<CertificateSigner> CertificateSigner::Create(EVP_PKEY* key, std::string* why) {
  if (key == nullptr) return Refuse(why, "no key");
  if (EVP_PKEY_is_a(key, "RSA") || EVP_PKEY_is_a(key, "RSA-PSS")) {
    return Refuse(why, "RSA keys are served by the OpenSSL engine");
  }
  char group[32] = {};
  size_t group_length = 0;
  if (!EVP_PKEY_is_a(key, "EC") ||
      EVP_PKEY_get_group_name(key, group, sizeof(group), &group_length) != 1 ||
      (std::strcmp(group, "prime256v1") != 0 && std::strcmp(group, "P-256") != 0)) {
    return Refuse(why, "only ECDSA P-256 keys are served by this engine; others by OpenSSL's");
  }
  std::unique_ptr<CertificateSigner> s(new CertificateSigner());
  if (EVP_PKEY_up_ref(key) != 1) return Refuse(why, "EVP_PKEY_up_ref failed");
  s->key_.reset(key);
  // Fetched once here: no lookup by name on the signing path.
  s->sha256_.reset(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  s->digest_.reset(EVP_MD_CTX_new());
  s->sign_.reset(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
  // The signature digest makes the provider refuse anything but a 32-byte digest.
  if (!s->sha256_ || !s->digest_ || !s->sign_ || EVP_PKEY_sign_init(s->sign_.get()) != 1 ||
      EVP_PKEY_CTX_set_signature_md(s->sign_.get(), s->sha256_.get()) != 1) {
    return Refuse(why, "libcrypto cannot sign with this key");
  }
  // A public-only key passes sign_init and fails on the first signature: find out now.
  uint8_t probe[kMaxSignatureLength];
  if (s->Sign(absl::MakeConstSpan(probe, 1), absl::MakeSpan(probe)) == 0) {
    return Refuse(why, "the key cannot sign (no private key?)");
  }
  return s;
}

size_t CertificateSigner::Sign(absl::Span<const uint8_t> content, absl::Span<uint8_t> signature) {
  uint8_t digest[kSha256Length];
  unsigned int digest_length = 0;
  size_t length = signature.size();
  // EVP_DigestInit_ex2 with the fetched EVP_MD reuses the context's digest state; the
  // sign context keeps its key and digest between calls (EVP_PKEY_sign does not consume it).
  if (signature.size() < kMaxSignatureLength ||
      EVP_DigestInit_ex2(digest_.get(), sha256_.get(), nullptr) != 1 ||
      EVP_DigestUpdate(digest_.get(), content.data(), content.size()) != 1 ||
      EVP_DigestFinal_ex(digest_.get(), digest, &digest_length) != 1 ||
      digest_length != kSha256Length ||
      EVP_PKEY_sign(sign_.get(), signature.data(), &length, digest, digest_length) != 1 ||
      length == 0 || length > kMaxSignatureLength) {
    ERR_clear_error();
    return 0;
  }
  return length;
}

}  // namespace onepass::tls::tls13
