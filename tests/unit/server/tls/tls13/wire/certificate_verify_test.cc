// ServerCertificateVerifyContent against RFC 8448 §3 end to end: the RFC's RSA-PSS
// signature (randomized, so not reproducible) must verify, under the certificate the RFC's
// Certificate message carries, over the content we build from the RFC's transcript. A single
// wrong byte of padding, context string or hash would fail it.
#include <openssl/evp.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "server/tls/tls13/wire/server_messages.h"
#include "tests/unit/server/tls/tls13/crypto/rfc8448_simple.h"
#include "tests/unit/server/tls/tls13/wire/wire_test_util.h"

namespace onepass::tls::tls13 {
namespace {

using testing::ByteVec;
using testing::Hex;

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// SHA-256 of the concatenated messages: the transcript hash of §4.4.1.
ByteVec Sha256(const ByteVec& messages) {
  ByteVec hash(32);
  unsigned int size = 0;
  EXPECT_EQ(EVP_Digest(messages.data(), messages.size(), hash.data(), &size, EVP_sha256(), nullptr),
            1);
  return hash;
}

// RSA-PSS with SHA-256, MGF1 SHA-256 and a digest-length salt: rsa_pss_rsae_sha256 (§4.2.3).
bool VerifyRsaPssSha256(EVP_PKEY* key, const uint8_t* content, size_t size,
                        const ByteVec& signature) {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;
  if (EVP_DigestVerifyInit(ctx.get(), &pctx, EVP_sha256(), nullptr, key) != 1) return false;
  if (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1) return false;
  if (EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1) return false;
  if (EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) != 1) return false;
  return EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), content, size) == 1;
}

TEST(CertificateVerify, Rfc8448SignatureVerifiesOverOurContent) {
  const ByteVec flight = Hex(testing::kRfc8448ServerFlight);
  ASSERT_EQ(flight.size(), 657u);
  // Layout as in server_messages_test.cc: EE 40 bytes, Certificate 445, CertificateVerify 136.
  const ByteVec der(flight.begin() + 51, flight.begin() + 51 + 432);
  const ByteVec signature(flight.begin() + 485 + 8, flight.begin() + 485 + 8 + 128);
  ASSERT_EQ(flight[485 + 4], 0x08);  // rsa_pss_rsae_sha256
  ASSERT_EQ(flight[485 + 5], 0x04);

  ByteVec transcript = Hex(testing::kRfc8448ClientHello);
  const ByteVec server_hello = Hex(testing::kRfc8448ServerHello);
  transcript.insert(transcript.end(), server_hello.begin(), server_hello.end());
  transcript.insert(transcript.end(), flight.begin(), flight.begin() + 40 + 445);
  const ByteVec hash = Sha256(transcript);

  uint8_t content[kMaxCertificateVerifyContent];
  const size_t size = ServerCertificateVerifyContent(hash, content);
  ASSERT_EQ(size, 130u);

  const uint8_t* p = der.data();
  std::unique_ptr<X509, X509Free> cert(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
  ASSERT_NE(cert, nullptr);
  std::unique_ptr<EVP_PKEY, PkeyFree> key(X509_get_pubkey(cert.get()));
  ASSERT_NE(key, nullptr);
  EXPECT_TRUE(VerifyRsaPssSha256(key.get(), content, size, signature));

  // One byte of the context string changed must not verify: the check can fail.
  content[64 + 9] ^= 1;
  EXPECT_FALSE(VerifyRsaPssSha256(key.get(), content, size, signature));
}

}  // namespace
}  // namespace onepass::tls::tls13
