// CertificateSigner: its signatures verify with libcrypto's EVP_DigestVerify over the public
// key alone; keys the engine does not serve are refused with a reason.
#include "server/tls/tls13/crypto/certificate_signer.h"

#include <gtest/gtest.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace onepass::tls::tls13 {
namespace {

using Bytes = std::vector<uint8_t>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;

// §4.4.3: 64 spaces, the context string, a zero byte, then the transcript hash.
Bytes VerifyContent(uint8_t hash_byte) {
  Bytes content(64, 0x20);
  const std::string context = "TLS 1.3, server CertificateVerify";
  content.insert(content.end(), context.begin(), context.end());
  content.push_back(0);
  content.insert(content.end(), 32, hash_byte);
  return content;
}

// The certificate's public key alone, as a client holds it.
PkeyPtr PublicOnly(EVP_PKEY* key) {
  uint8_t pub[65];
  size_t length = 0;
  EXPECT_EQ(EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pub,
                                            sizeof(pub), &length),
            1);
  PkeyPtr out(EVP_PKEY_new());
  EXPECT_EQ(EVP_PKEY_copy_parameters(out.get(), key), 1);
  EXPECT_EQ(EVP_PKEY_set1_encoded_public_key(out.get(), pub, length), 1);
  return out;
}

bool Verifies(EVP_PKEY* public_key, const Bytes& content, const Bytes& signature) {
  std::unique_ptr<EVP_MD_CTX, EvpMdCtxDeleter> ctx(EVP_MD_CTX_new());
  bool ok = EVP_DigestVerifyInit_ex(ctx.get(), nullptr, "SHA256", nullptr, nullptr, public_key,
                                    nullptr) == 1 &&
            EVP_DigestVerify(ctx.get(), signature.data(), signature.size(), content.data(),
                             content.size()) == 1;
  ERR_clear_error();
  return ok;
}

class CertificateSignerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    key_.reset(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
    ASSERT_NE(key_, nullptr);
  }
  Bytes Sign(CertificateSigner& signer, const Bytes& content) {
    Bytes signature(CertificateSigner::kMaxSignatureLength);
    size_t length = signer.Sign(content, absl::MakeSpan(signature));
    signature.resize(length);
    return signature;
  }
  PkeyPtr key_;
};

TEST_F(CertificateSignerTest, SignaturesVerifyWithThePublicKey) {
  std::string why;
  auto signer = CertificateSigner::Create(key_.get(), &why);
  ASSERT_NE(signer, nullptr) << why;
  EXPECT_EQ(signer->scheme(), 0x0403);
  PkeyPtr public_key = PublicOnly(key_.get());
  Bytes previous;
  for (uint8_t i = 0; i < 8; ++i) {
    const Bytes content = VerifyContent(i);
    Bytes signature = Sign(*signer, content);
    ASSERT_FALSE(signature.empty());
    EXPECT_LE(signature.size(), CertificateSigner::kMaxSignatureLength);
    EXPECT_EQ(signature[0], 0x30);  // DER SEQUENCE (r, s)
    EXPECT_TRUE(Verifies(public_key.get(), content, signature));
    // A different transcript, or a changed signature, does not verify.
    EXPECT_FALSE(Verifies(public_key.get(), VerifyContent(i + 1), signature));
    Bytes changed = signature;
    changed.back() ^= 1;
    EXPECT_FALSE(Verifies(public_key.get(), content, changed));
    EXPECT_NE(signature, previous);  // ECDSA's nonce is fresh each time
    previous = signature;
  }
  EXPECT_TRUE(Verifies(public_key.get(), Bytes(), Sign(*signer, Bytes())));
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(CertificateSignerTest, HoldsItsOwnReferenceToTheKey) {
  PkeyPtr public_key = PublicOnly(key_.get());
  auto signer = CertificateSigner::Create(key_.get(), nullptr);
  ASSERT_NE(signer, nullptr);
  key_.reset();
  const Bytes content = VerifyContent(7);
  EXPECT_TRUE(Verifies(public_key.get(), content, Sign(*signer, content)));
}

TEST_F(CertificateSignerTest, SignersShareOneKey) {
  auto a = CertificateSigner::Create(key_.get(), nullptr);
  auto b = CertificateSigner::Create(key_.get(), nullptr);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  PkeyPtr public_key = PublicOnly(key_.get());
  const Bytes content = VerifyContent(3);
  EXPECT_TRUE(Verifies(public_key.get(), content, Sign(*a, content)));
  EXPECT_TRUE(Verifies(public_key.get(), content, Sign(*b, content)));
}

// Workers each make a signer from the context's one key and sign at the same time.
TEST_F(CertificateSignerTest, WorkerThreadsSignWithOneSharedKey) {
  PkeyPtr public_key = PublicOnly(key_.get());
  constexpr int kThreads = 4;
  std::vector<Bytes> signatures[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto signer = CertificateSigner::Create(key_.get(), nullptr);
      for (int i = 0; signer && i < 25; ++i) {
        signatures[t].push_back(Sign(*signer, VerifyContent(uint8_t(t))));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(signatures[t].size(), 25u);
    for (const Bytes& signature : signatures[t]) {
      EXPECT_TRUE(Verifies(public_key.get(), VerifyContent(uint8_t(t)), signature));
    }
  }
}

TEST_F(CertificateSignerTest, ShortSignatureBufferFails) {
  auto signer = CertificateSigner::Create(key_.get(), nullptr);
  ASSERT_NE(signer, nullptr);
  Bytes signature(CertificateSigner::kMaxSignatureLength - 1);
  EXPECT_EQ(signer->Sign(VerifyContent(1), absl::MakeSpan(signature)), 0u);
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(CertificateSignerTest, RsaKeyIsLeftToOpenSsl) {
  PkeyPtr rsa(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", size_t{2048}));
  ASSERT_NE(rsa, nullptr);
  std::string why;
  EXPECT_EQ(CertificateSigner::Create(rsa.get(), &why), nullptr);
  EXPECT_EQ(why, "RSA keys are served by the OpenSSL engine");
  EXPECT_EQ(CertificateSigner::Create(rsa.get(), nullptr), nullptr);  // why is optional
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST_F(CertificateSignerTest, OtherKeysAreRefusedWithAReason) {
  PkeyPtr p384(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"));
  PkeyPtr ed25519(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  PkeyPtr public_only = PublicOnly(key_.get());
  for (EVP_PKEY* key :
       {p384.get(), ed25519.get(), public_only.get(), static_cast<EVP_PKEY*>(nullptr)}) {
    std::string why;
    EXPECT_EQ(CertificateSigner::Create(key, &why), nullptr);
    EXPECT_FALSE(why.empty());
  }
  EXPECT_EQ(ERR_peek_error(), 0u);
}

}  // namespace
}  // namespace onepass::tls::tls13
