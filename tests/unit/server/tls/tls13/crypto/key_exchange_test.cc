// KeyExchange against RFC 7748 §6.1 and RFC 8448 §3, against libcrypto's own derivation for
// fresh keys, and its refusals of bad client shares (RFC 8446 §4.2.8.2, §7.4.2).
#include "server/tls/tls13/crypto/key_exchange.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include <memory>
#include <vector>

#include "server/tls/tls13/wire/client_hello.h"
#include "tests/unit/server/tls/tls13/crypto/hex.h"

namespace onepass::tls::tls13 {
namespace {

using testing::Hex;

using Bytes = std::vector<uint8_t>;

// RFC 7748 §6.1.
const char kAlicePrivate[] = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
const char kAlicePublic[] = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
const char kBobPrivate[] = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
const char kBobPublic[] = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
const char kAliceBobShared[] = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";

// RFC 8448 §3: {server} create an ephemeral x25519 key pair, the client's key_share (also in
// kRfc8448ClientHello) and the (EC)DHE input of {server} extract secret "handshake".
const char kRfc8448ServerPrivate[] =
    "b1 58 0e ea df 6d d5 89 b8 ef 4f 2d 56 52 57 8c c8 10 e9 98 01 91 ec 8d 05 83 08 ce a2 16"
    " a2 1e";
const char kRfc8448ServerPublic[] =
    "c9 82 88 76 11 20 95 fe 66 76 2b db f7 c6 72 e1 56 d6 cc 25 3b 83 3d f1 dd 69 b1 b0 4e 75"
    " 1f 0f";
const char kRfc8448ClientPublic[] =
    "99 38 1d e5 60 e4 bd 43 d2 3d 8e 43 5a 7d ba fe b3 c0 6e 51 c1 3c ae 4d 54 13 69 1e 52 9a"
    " af 2c";
const char kRfc8448Shared[] =
    "8b d4 05 4f b5 5b 9d 63 fd fb ac f9 f0 4b 9f 0d 35 e6 d6 3f 53 75 63 ef d4 62 72 90 0f 89"
    " 49 2d";

using PkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;

PkeyPtr Generate(uint16_t group) {
  return PkeyPtr(group == kGroupX25519 ? EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519")
                                       : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
}

Bytes EncodedPublic(EVP_PKEY* key) {
  Bytes out(kMaxKeyShareLength);
  size_t length = 0;
  EXPECT_EQ(EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, out.data(),
                                            out.size(), &length),
            1);
  out.resize(length);
  return out;
}

// The client's side, by libcrypto alone: its key with our share, as OpenSSL's TLS does.
Bytes OpenSslDerive(EVP_PKEY* client, uint16_t group, const Bytes& server_share) {
  PkeyPtr peer;
  if (group == kGroupX25519) {
    peer.reset(EVP_PKEY_new_raw_public_key_ex(nullptr, "X25519", nullptr, server_share.data(),
                                              server_share.size()));
  } else {
    peer.reset(EVP_PKEY_new());
    EXPECT_EQ(EVP_PKEY_copy_parameters(peer.get(), client), 1);
    EXPECT_EQ(
        EVP_PKEY_set1_encoded_public_key(peer.get(), server_share.data(), server_share.size()), 1);
  }
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, client, nullptr));
  Bytes secret(64);
  size_t length = secret.size();
  EXPECT_EQ(EVP_PKEY_derive_init(ctx.get()), 1);
  EXPECT_EQ(EVP_PKEY_derive_set_peer(ctx.get(), peer.get()), 1);
  EXPECT_EQ(EVP_PKEY_derive(ctx.get(), secret.data(), &length), 1);
  secret.resize(length);
  return secret;
}

class KeyExchangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kx_ = KeyExchange::Create();
    ASSERT_NE(kx_, nullptr);
  }
  KeyExchange::Result Run(uint16_t group, const Bytes& client_share,
                          const Bytes& next_key_seed = {}) {
    share_.assign(kMaxKeyShareLength, 0);
    secret_.assign(kMaxSharedSecretLength, 0xaa);
    auto r = kx_->Exchange(group, client_share, absl::MakeSpan(share_), absl::MakeSpan(secret_),
                           next_key_seed);
    share_.resize(r.share_length);
    return r;
  }
  KeyExchange::Result RunWithKey(uint16_t group, const Bytes& priv, const Bytes& client_share) {
    share_.assign(kMaxKeyShareLength, 0);
    secret_.assign(kMaxSharedSecretLength, 0xaa);
    auto r = kx_->ExchangeWithPrivateKey(group, priv, client_share, absl::MakeSpan(share_),
                                         absl::MakeSpan(secret_));
    share_.resize(r.share_length);
    secret_.resize(r.ok ? r.secret_length : secret_.size());
    return r;
  }
  // A refusal with `alert`, the secret span wiped and no error left for the next caller.
  void ExpectRefused(uint16_t group, const Bytes& client_share, uint8_t alert) {
    auto r = Run(group, client_share);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.alert, alert);
    EXPECT_EQ(secret_, Bytes(kMaxSharedSecretLength, 0));
    EXPECT_EQ(ERR_peek_error(), 0u);
  }
  // After refusals the worker's state still makes good exchanges.
  void ExpectStillWorks(uint16_t group) {
    PkeyPtr client = Generate(group);
    auto r = Run(group, EncodedPublic(client.get()));
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(Bytes(secret_.begin(), secret_.begin() + r.secret_length),
              OpenSslDerive(client.get(), group, share_));
  }

  std::unique_ptr<KeyExchange> kx_;
  Bytes share_, secret_;
};

TEST_F(KeyExchangeTest, ShareLengths) {
  EXPECT_EQ(KeyShareLength(kGroupX25519), 32u);
  EXPECT_EQ(KeyShareLength(kGroupSecp256r1), 65u);
  EXPECT_EQ(KeyShareLength(0x0018), 0u);
}

TEST_F(KeyExchangeTest, Rfc7748X25519Vector) {
  auto r = RunWithKey(kGroupX25519, Hex(kAlicePrivate), Hex(kBobPublic));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.share_length, 32u);
  EXPECT_EQ(r.secret_length, 32u);
  EXPECT_EQ(share_, Hex(kAlicePublic));
  EXPECT_EQ(secret_, Hex(kAliceBobShared));
  r = RunWithKey(kGroupX25519, Hex(kBobPrivate), Hex(kAlicePublic));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(share_, Hex(kBobPublic));
  EXPECT_EQ(secret_, Hex(kAliceBobShared));
}

TEST_F(KeyExchangeTest, Rfc8448ServerKeyShareAndSharedSecret) {
  auto r = RunWithKey(kGroupX25519, Hex(kRfc8448ServerPrivate), Hex(kRfc8448ClientPublic));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(share_, Hex(kRfc8448ServerPublic));
  EXPECT_EQ(secret_, Hex(kRfc8448Shared));
}

// Fresh keys on the reused contexts: each exchange agrees with libcrypto's own derivation on
// the client's side, and each uses a new key pair.
TEST_F(KeyExchangeTest, FreshKeysAgreeWithOpenSsl) {
  for (uint16_t group : {kGroupX25519, kGroupSecp256r1, kGroupX25519, kGroupSecp256r1}) {
    Bytes previous;
    for (int i = 0; i < 4; ++i) {
      SCOPED_TRACE(::testing::Message() << "group " << group << " round " << i);
      PkeyPtr client = Generate(group);
      ASSERT_NE(client, nullptr);
      auto r = Run(group, EncodedPublic(client.get()));
      ASSERT_TRUE(r.ok);
      EXPECT_EQ(r.share_length, KeyShareLength(group));
      EXPECT_EQ(r.secret_length, 32u);
      if (group == kGroupSecp256r1) {
        EXPECT_EQ(share_[0], 0x04);
      }
      EXPECT_EQ(Bytes(secret_.begin(), secret_.begin() + 32),
                OpenSslDerive(client.get(), group, share_));
      EXPECT_NE(share_, previous);
      previous = share_;
    }
  }
  EXPECT_EQ(ERR_peek_error(), 0u);
}

// A seed given to an X25519 exchange is the private key of the next one (the caller's single
// DRBG draw per handshake): the next share and secret are what RFC 7748's vector gives for that
// key. A seed of another length is ignored (the next key comes from the DRBG); a failed
// exchange keeps its unused key and spends no seed.
TEST_F(KeyExchangeTest, ASeedIsTheNextX25519Key) {
  PkeyPtr client = Generate(kGroupX25519);
  ASSERT_TRUE(Run(kGroupX25519, EncodedPublic(client.get()), Hex(kAlicePrivate)).ok);
  auto r = Run(kGroupX25519, Hex(kBobPublic));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(share_, Hex(kAlicePublic));
  EXPECT_EQ(Bytes(secret_.begin(), secret_.begin() + r.secret_length), Hex(kAliceBobShared));

  ASSERT_TRUE(Run(kGroupX25519, Hex(kBobPublic), Bytes(31, 7)).ok);
  r = Run(kGroupX25519, EncodedPublic(client.get()));
  ASSERT_TRUE(r.ok);
  EXPECT_NE(share_, Hex(kAlicePublic));
  EXPECT_EQ(Bytes(secret_.begin(), secret_.begin() + r.secret_length),
            OpenSslDerive(client.get(), kGroupX25519, share_));

  ASSERT_TRUE(Run(kGroupX25519, Hex(kBobPublic), Hex(kAlicePrivate)).ok);
  ExpectRefused(kGroupX25519, Bytes(32, 0), 47);  // the all-zero output
  r = Run(kGroupX25519, Hex(kBobPublic));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(share_, Hex(kAlicePublic));
  EXPECT_EQ(ERR_peek_error(), 0u);
}

// ExchangeWithPrivateKey for P-256: the key pair OpenSSL made, given by its scalar alone.
TEST_F(KeyExchangeTest, P256WithPrivateKeyMatchesOpenSsl) {
  PkeyPtr server = Generate(kGroupSecp256r1);
  PkeyPtr client = Generate(kGroupSecp256r1);
  BIGNUM* priv = nullptr;
  ASSERT_EQ(EVP_PKEY_get_bn_param(server.get(), OSSL_PKEY_PARAM_PRIV_KEY, &priv), 1);
  Bytes scalar(32);
  ASSERT_EQ(BN_bn2binpad(priv, scalar.data(), scalar.size()), 32);
  BN_clear_free(priv);
  auto r = RunWithKey(kGroupSecp256r1, scalar, EncodedPublic(client.get()));
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(share_, EncodedPublic(server.get()));
  EXPECT_EQ(secret_, OpenSslDerive(client.get(), kGroupSecp256r1, share_));
}

// §4.2.8.2: only the uncompressed form, on the curve, with coordinates below p.
TEST_F(KeyExchangeTest, RefusesInvalidP256Points) {
  PkeyPtr client = Generate(kGroupSecp256r1);
  const Bytes good = EncodedPublic(client.get());
  Bytes off_curve = good;
  off_curve[64] ^= 1;
  Bytes compressed_prefix = good;
  compressed_prefix[0] = 0x02;
  Bytes hybrid_prefix = good;
  hybrid_prefix[0] = 0x06;
  Bytes compressed(good.begin(), good.begin() + 33);
  compressed[0] = 0x02 | (good[64] & 1);
  Bytes zeros(65, 0);
  zeros[0] = 0x04;
  // X = p, the field prime: a non-canonical coordinate.
  Bytes x_is_p = Hex("04 ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
  x_is_p.insert(x_is_p.end(), good.begin() + 33, good.end());
  Bytes y_is_p(good.begin(), good.begin() + 33);
  const Bytes p = Hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
  y_is_p.insert(y_is_p.end(), p.begin(), p.end());
  for (const Bytes& share :
       {off_curve, compressed_prefix, hybrid_prefix, compressed, zeros, x_is_p, y_is_p,
        Bytes(good.begin(), good.end() - 1), Bytes(1, 0x00), Bytes()}) {
    SCOPED_TRACE(share.size());
    ExpectRefused(kGroupSecp256r1, share, 47);
  }
  Bytes longer = good;
  longer.push_back(0);
  ExpectRefused(kGroupSecp256r1, longer, 47);
  ExpectStillWorks(kGroupSecp256r1);
}

// RFC 7748 §6.1 / RFC 8446 §7.4.2: small-order points give the all-zero output. 0 and 1,
// the points of order 8 and p-1, p, p+1 (non-canonical encodings of 0, 1 and -1).
TEST_F(KeyExchangeTest, RefusesLowOrderX25519Points) {
  Bytes one(32, 0);
  one[0] = 1;
  for (const char* point : {
           "0000000000000000000000000000000000000000000000000000000000000000",
           "0100000000000000000000000000000000000000000000000000000000000000",
           "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
           "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
           "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
           "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
           "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
       }) {
    SCOPED_TRACE(point);
    ExpectRefused(kGroupX25519, Hex(point), 47);
  }
  auto r = RunWithKey(kGroupX25519, Hex(kAlicePrivate), Bytes(32, 0));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.alert, 47);
  ExpectStillWorks(kGroupX25519);
}

TEST_F(KeyExchangeTest, RefusesX25519SharesOfTheWrongLength) {
  const Bytes good = Hex(kBobPublic);
  ExpectRefused(kGroupX25519, Bytes(good.begin(), good.end() - 1), 47);
  Bytes longer = good;
  longer.push_back(0);
  ExpectRefused(kGroupX25519, longer, 47);
  ExpectRefused(kGroupX25519, Bytes(), 47);
  ExpectStillWorks(kGroupX25519);
}

TEST_F(KeyExchangeTest, UnknownGroupsAndShortSpansAreInternalErrors) {
  for (uint16_t group : {0x0000, 0x0018, 0x0019, 0x001e, 0x0100, 0x11ec}) {
    SCOPED_TRACE(group);
    ExpectRefused(group, Hex(kBobPublic), 80);
  }
  Bytes share(kMaxKeyShareLength - 1), secret(kMaxSharedSecretLength);
  auto r =
      kx_->Exchange(kGroupX25519, Hex(kBobPublic), absl::MakeSpan(share), absl::MakeSpan(secret));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.alert, 80);
  share.resize(kMaxKeyShareLength);
  secret.resize(kMaxSharedSecretLength - 1);
  r = kx_->Exchange(kGroupX25519, Hex(kBobPublic), absl::MakeSpan(share), absl::MakeSpan(secret));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.alert, 80);
  r = RunWithKey(kGroupX25519, Bytes(31, 1), Hex(kBobPublic));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.alert, 80);
}

// Two workers' instances are independent (one per thread; here on one thread in turn).
TEST_F(KeyExchangeTest, InstancesAreIndependent) {
  auto other = KeyExchange::Create();
  ASSERT_NE(other, nullptr);
  PkeyPtr client = Generate(kGroupX25519);
  const Bytes share = EncodedPublic(client.get());
  Bytes a(kMaxKeyShareLength), b(kMaxKeyShareLength), sa(32), sb(32);
  ASSERT_TRUE(kx_->Exchange(kGroupX25519, share, absl::MakeSpan(a), absl::MakeSpan(sa)).ok);
  ASSERT_TRUE(other->Exchange(kGroupX25519, share, absl::MakeSpan(b), absl::MakeSpan(sb)).ok);
  EXPECT_NE(a, b);
  EXPECT_NE(sa, sb);
}

}  // namespace
}  // namespace onepass::tls::tls13
