// The ticket format as session_ticket.h documents it, rebuilt here from the header's words with
// libcrypto alone: K from HKDF-SHA256, the plaintext layout, AES-256-GCM with the name as AAD.
// Tickets forged with the right key but a broken plaintext must still be refused, and tickets
// under the file's raw keys (not K) must not open.
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "server/tls/tls13/ticket/session_ticket.h"
#include "tests/unit/server/tls/tls13/ticket/test_keys.h"

namespace onepass::tls::tls13 {
namespace {

using testing::kNowMs;
using testing::MakeKey;

std::vector<uint8_t> DocumentedKey(const TicketKey& file_key) {
  static const char kInfo[] = "onepass tls13 session ticket v1 AES-256-GCM";
  std::vector<uint8_t> ikm(file_key.hmac_key.begin(), file_key.hmac_key.end());
  ikm.insert(ikm.end(), file_key.aes_key.begin(), file_key.aes_key.end());
  EVP_KDF* kdf = EVP_KDF_fetch(nullptr, "HKDF", nullptr);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, ikm.data(), ikm.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT,
                                        const_cast<uint8_t*>(file_key.name.data()), 16),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, const_cast<char*>(kInfo),
                                        sizeof(kInfo) - 1),
      OSSL_PARAM_construct_end()};
  std::vector<uint8_t> key(32);
  EXPECT_EQ(EVP_KDF_derive(ctx, key.data(), key.size(), params), 1);
  EVP_KDF_CTX_free(ctx);
  EVP_KDF_free(kdf);
  return key;
}

// The documented plaintext of a SHA-256 suite's state, ALPN "dot".
std::vector<uint8_t> Plaintext(uint8_t version = 1, uint16_t suite = 0x1301,
                               uint8_t psk_length = 32, uint8_t alpn_length = 3,
                               uint32_t lifetime = 7200) {
  std::vector<uint8_t> p(kTicketPlaintextLength, 0);
  p[0] = version;
  p[1] = static_cast<uint8_t>(suite >> 8);
  p[2] = static_cast<uint8_t>(suite);
  for (int i = 0; i < 8; ++i) p[3 + i] = static_cast<uint8_t>(kNowMs >> (56 - 8 * i));
  for (int i = 0; i < 4; ++i) p[11 + i] = static_cast<uint8_t>(lifetime >> (24 - 8 * i));
  p[15] = 0x12, p[16] = 0x34, p[17] = 0x56, p[18] = 0x78;  // age_add
  p[19] = psk_length;
  for (size_t i = 0; i < psk_length && i < kMaxHashLength; ++i) p[20 + i] = 0x40;
  p[68] = alpn_length;
  std::memcpy(&p[69], "dot", alpn_length < 3 ? alpn_length : 3);
  return p;
}

// name | iv | AES-256-GCM(key, iv, aad, plaintext) | tag.
std::vector<uint8_t> GcmSeal(const std::vector<uint8_t>& key, const TicketKey& file_key,
                             const std::vector<uint8_t>& plaintext, bool name_as_aad = true) {
  std::vector<uint8_t> t(file_key.name.begin(), file_key.name.end());
  const uint8_t iv[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  t.insert(t.end(), iv, iv + 12);
  t.resize(28 + plaintext.size() + 16);
  EVP_CIPHER* gcm = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  EXPECT_EQ(EVP_EncryptInit_ex2(ctx, gcm, key.data(), iv, nullptr), 1);
  if (name_as_aad) {
    EXPECT_EQ(EVP_EncryptUpdate(ctx, nullptr, &len, t.data(), 16), 1);
  }
  EXPECT_EQ(
      EVP_EncryptUpdate(ctx, &t[28], &len, plaintext.data(), static_cast<int>(plaintext.size())),
      1);
  EXPECT_EQ(EVP_EncryptFinal_ex(ctx, &t[28 + len], &len), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, &t[28 + plaintext.size()]), 1);
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(gcm);
  return t;
}

class TicketFormatTest : public ::testing::Test {
 protected:
  bool Opens(const std::vector<uint8_t>& ticket) {
    TicketSealer sealer(*ring_);
    return sealer.Open(ticket, kNowMs, &opened_);
  }
  const TicketKey file_key_ = MakeKey(7);
  const std::vector<uint8_t> k_ = DocumentedKey(file_key_);
  std::unique_ptr<TicketKeyring> ring_ = TicketKeyring::Create(absl::MakeConstSpan(&file_key_, 1));
  TicketState opened_;
};

TEST_F(TicketFormatTest, TheDocumentedConstructionOpensWithEveryField) {
  ASSERT_EQ(kTicketLength, 145u);
  ASSERT_TRUE(Opens(GcmSeal(k_, file_key_, Plaintext())));
  EXPECT_EQ(opened_.suite, CipherSuite::kAes128GcmSha256);
  EXPECT_EQ(opened_.issued_unix_ms, kNowMs);
  EXPECT_EQ(opened_.lifetime_seconds, 7200u);
  EXPECT_EQ(opened_.age_add, 0x12345678u);
  EXPECT_EQ(opened_.psk_length, 32);
  EXPECT_EQ(opened_.psk[0], 0x40);
  EXPECT_EQ(opened_.psk[31], 0x40);
  EXPECT_EQ(opened_.psk[32], 0);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(opened_.alpn), opened_.alpn_length), "dot");
}

TEST_F(TicketFormatTest, SealWritesTheDocumentedConstruction) {
  TicketSealer sealer(*ring_);
  TicketState state = testing::MakeState(CipherSuite::kAes128GcmSha256, "dot");
  std::memset(state.psk, 0x40, 32);
  state.age_add = 0x12345678;
  uint8_t ticket[kMaxTicketLength];
  ASSERT_EQ(sealer.Seal(state, ticket), kTicketLength);
  std::vector<uint8_t> plaintext(kTicketPlaintextLength);
  EVP_CIPHER* gcm = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int len = 0;
  ASSERT_EQ(EVP_DecryptInit_ex2(ctx, gcm, k_.data(), ticket + 16, nullptr), 1);
  ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, ticket + 28 + plaintext.size()), 1);
  ASSERT_EQ(EVP_DecryptUpdate(ctx, nullptr, &len, ticket, 16), 1);
  ASSERT_EQ(EVP_DecryptUpdate(ctx, plaintext.data(), &len, ticket + 28,
                              static_cast<int>(plaintext.size())),
            1);
  EXPECT_EQ(EVP_DecryptFinal_ex(ctx, plaintext.data() + len, &len), 1);
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(gcm);
  EXPECT_EQ(plaintext, Plaintext());
}

TEST_F(TicketFormatTest, RightKeyBrokenPlaintextIsRefused) {
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(/*version=*/0))));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(/*version=*/2))));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(1, /*suite=*/0x1304))));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(1, /*suite=*/0x1302))));  // PSK is 32
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(1, 0x1301, /*psk_length=*/48))));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(1, 0x1301, /*psk_length=*/0))));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(1, 0x1301, /*psk_length=*/255))));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(1, 0x1301, 32, /*alpn_length=*/33))));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(1, 0x1301, 32, 3, /*lifetime=*/604801))));
  std::vector<uint8_t> p = Plaintext();
  p[20 + 32] = 1;  // past the PSK
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, p)));
  p = Plaintext();
  p[69 + 3] = 1;  // past the ALPN
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, p)));
  p = Plaintext();
  p.push_back(0);  // one byte too many
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, p)));
  EXPECT_TRUE(Opens(GcmSeal(k_, file_key_, Plaintext(1, 0x1301, 32, 0))));  // no ALPN is fine
}

TEST_F(TicketFormatTest, TheFileKeysThemselvesOrNoAadDoNotOpen) {
  const std::vector<uint8_t> aes(file_key_.aes_key.begin(), file_key_.aes_key.end());
  const std::vector<uint8_t> hmac(file_key_.hmac_key.begin(), file_key_.hmac_key.end());
  EXPECT_FALSE(Opens(GcmSeal(aes, file_key_, Plaintext())));
  EXPECT_FALSE(Opens(GcmSeal(hmac, file_key_, Plaintext())));
  EXPECT_FALSE(Opens(GcmSeal(k_, file_key_, Plaintext(), /*name_as_aad=*/false)));
}

}  // namespace
}  // namespace onepass::tls::tls13
