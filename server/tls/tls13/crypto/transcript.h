// The handshake transcript hash (RFC 8446 §4.4.1): a running hash over the handshake
// messages, read at each point the key schedule needs without ending it.
#ifndef ONEPASS_SERVER_TLS_TLS13_CRYPTO_TRANSCRIPT_H_
#define ONEPASS_SERVER_TLS_TLS13_CRYPTO_TRANSCRIPT_H_

#include <openssl/evp.h>

#include <cstdint>
#include <memory>

#include "absl/types/span.h"
#include "server/tls/tls13/crypto/cipher_suite.h"

namespace onepass::tls::tls13 {

struct EvpMdCtxDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// Per connection, one thread. The two contexts are allocated once and reused across
// Start() calls (a reused connection slot does not allocate again).
class Transcript {
 public:
  explicit Transcript(const SuiteAlgorithms& algorithms) : algorithms_(algorithms) {}

  // Begins an empty transcript with the suite's hash. False on a libcrypto failure.
  bool Start(CipherSuite suite);
  // Appends whole handshake messages (with their 4-byte headers).
  bool Add(absl::Span<const uint8_t> bytes);
  // Writes Hash(messages so far) into out (HashLength(suite) bytes; out must hold them).
  bool CurrentHash(absl::Span<uint8_t> out);
  // HelloRetryRequest (§4.4.1): the transcript so far (ClientHello1) is replaced by the
  // synthetic message_hash message: 254 | 00 00 Hash.length | Hash(ClientHello1).
  bool ReplaceWithMessageHash();

  size_t hash_length() const { return hash_length_; }

 private:
  const SuiteAlgorithms& algorithms_;
  std::unique_ptr<EVP_MD_CTX, EvpMdCtxDeleter> ctx_{EVP_MD_CTX_new()};
  std::unique_ptr<EVP_MD_CTX, EvpMdCtxDeleter> scratch_{EVP_MD_CTX_new()};
  const EVP_MD* md_ = nullptr;
  size_t hash_length_ = 0;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_CRYPTO_TRANSCRIPT_H_
