// TicketKeyring: one HKDF per file key at load time, so sealing and opening only look keys up.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <cstring>

#include "server/tls/tls13/ticket/session_ticket.h"

namespace onepass::tls::tls13 {
namespace {

// HKDF's info (RFC 5869 §2.3): what K is for. A new format or AEAD gets a new string, and so
// keys of its own from the same file.
constexpr char kTicketKeyInfo[] = "onepass tls13 session ticket v1 AES-256-GCM";

struct EvpKdfDeleter {
  void operator()(EVP_KDF* k) const { EVP_KDF_free(k); }
};
struct EvpKdfCtxDeleter {
  void operator()(EVP_KDF_CTX* c) const { EVP_KDF_CTX_free(c); }
};

// K = HKDF-SHA256(salt = name, IKM = hmac_key | aes_key, info, 32), see the header. The name is
// public and differs per key: a fine salt (RFC 5869 §3.1 asks for no secrecy of it).
bool DeriveKey(EVP_KDF_CTX* kdf, const TicketKey& file_key, uint8_t* out) {
  uint8_t ikm[sizeof(file_key.hmac_key) + sizeof(file_key.aes_key)];
  std::memcpy(ikm, file_key.hmac_key.data(), file_key.hmac_key.size());
  std::memcpy(ikm + file_key.hmac_key.size(), file_key.aes_key.data(), file_key.aes_key.size());
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, ikm, sizeof(ikm)),
      OSSL_PARAM_construct_octet_string(
          OSSL_KDF_PARAM_SALT, const_cast<uint8_t*>(file_key.name.data()), file_key.name.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(kTicketKeyInfo),
                                        sizeof(kTicketKeyInfo) - 1),
      OSSL_PARAM_construct_end()};
  const bool ok = EVP_KDF_derive(kdf, out, 32, params) == 1;
  OPENSSL_cleanse(ikm, sizeof(ikm));
  return ok;
}

}  // namespace

std::unique_ptr<TicketKeyring> TicketKeyring::Create(absl::Span<const TicketKey> keys) {
  if (keys.empty() || keys.size() > kMaxTicketKeys) return nullptr;
  for (size_t i = 0; i < keys.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (keys[i].name == keys[j].name) return nullptr;  // Open could not tell them apart
    }
  }
  std::unique_ptr<TicketKeyring> ring(new TicketKeyring());
  ring->aes256gcm_.reset(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr));
  std::unique_ptr<EVP_KDF, EvpKdfDeleter> hkdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  if (!ring->aes256gcm_ || !hkdf) return nullptr;
  std::unique_ptr<EVP_KDF_CTX, EvpKdfCtxDeleter> kdf(EVP_KDF_CTX_new(hkdf.get()));
  if (!kdf) return nullptr;
  for (const TicketKey& key : keys) {
    Entry& entry = ring->entries_[ring->count_++];
    std::memcpy(entry.name, key.name.data(), sizeof(entry.name));
    // On failure the ring is destroyed, which wipes what was derived so far.
    if (!DeriveKey(kdf.get(), key, entry.key)) return nullptr;
  }
  return ring;
}

TicketKeyring::~TicketKeyring() { OPENSSL_cleanse(entries_.data(), sizeof(entries_)); }

const TicketKeyring::Entry* TicketKeyring::Find(const uint8_t* name) const {
  for (size_t i = 0; i < count_; ++i) {
    if (std::memcmp(entries_[i].name, name, kTicketNameLength) == 0) return &entries_[i];
  }
  return nullptr;
}

}  // namespace onepass::tls::tls13
