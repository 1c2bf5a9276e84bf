#include "server/tls/tls13/crypto/key_exchange.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/obj_mac.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <cstring>

namespace onepass::tls::tls13 {
namespace {

// NamedGroup (§4.2.7), named apart from wire/client_hello.h's constants so that this target
// does not depend on the wire one.
constexpr uint16_t kX25519 = 0x001d;
constexpr uint16_t kSecp256r1 = 0x0017;
constexpr uint8_t kIllegalParameter = 47;
constexpr uint8_t kInternalError = 80;
constexpr size_t kX25519Length = 32;
constexpr size_t kP256ShareLength = 65;
constexpr size_t kSecretLength = 32;  // X25519 output; P-256's x-coordinate (§7.4.2)
constexpr size_t kPrivateKeyLength = 32;
static_assert(kNextKeySeedLength == kPrivateKeyLength);
constexpr uint8_t kX25519BasePoint[kX25519Length] = {9};  // RFC 7748 §4.1, u = 9

KeyExchange::Result Fail(uint8_t alert, absl::Span<uint8_t> shared_secret) {
  // The OpenSSL engine on this thread reads the same error queue: leave nothing in it.
  ERR_clear_error();
  OPENSSL_cleanse(shared_secret.data(), shared_secret.size());
  return {false, alert, 0, 0};
}

// An EVP_PKEY holding only a public key (the peer's slot, later replaced in place).
EvpPkeyPtr PublicKeyOf(EVP_PKEY* key, bool ec) {
  uint8_t pub[kMaxKeyShareLength];
  size_t length = 0;
  if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, pub, sizeof(pub),
                                      &length) != 1) {
    return nullptr;
  }
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, ec ? "EC" : "X25519", nullptr));
  OSSL_PARAM params[3];
  size_t n = 0;
  if (ec) {
    params[n++] =
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>("P-256"), 0);
  }
  params[n++] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pub, length);
  params[n] = OSSL_PARAM_construct_end();
  EVP_PKEY* made = nullptr;
  if (!ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &made, EVP_PKEY_PUBLIC_KEY, params) != 1) {
    return nullptr;
  }
  return EvpPkeyPtr(made);
}

// A P-256 key pair from its scalar (big-endian). EC's fromdata in OpenSSL 3.0 does not
// compute the public key, so libcrypto's EC_POINT_mul makes it (tests only).
EvpPkeyPtr P256FromPrivate(absl::Span<const uint8_t> scalar) {
  std::unique_ptr<EC_GROUP, decltype(&EC_GROUP_free)> group(
      EC_GROUP_new_by_curve_name_ex(nullptr, nullptr, NID_X9_62_prime256v1), EC_GROUP_free);
  std::unique_ptr<BIGNUM, decltype(&BN_clear_free)> priv(
      BN_bin2bn(scalar.data(), scalar.size(), nullptr), BN_clear_free);
  if (!group || !priv) return nullptr;
  std::unique_ptr<EC_POINT, decltype(&EC_POINT_free)> point(EC_POINT_new(group.get()),
                                                            EC_POINT_free);
  uint8_t pub[kP256ShareLength];
  uint8_t priv_native[kPrivateKeyLength];  // OSSL_PARAM BNs are native-endian
  if (!point ||
      EC_POINT_mul(group.get(), point.get(), priv.get(), nullptr, nullptr, nullptr) != 1 ||
      EC_POINT_point2oct(group.get(), point.get(), POINT_CONVERSION_UNCOMPRESSED, pub, sizeof(pub),
                         nullptr) != sizeof(pub) ||
      BN_bn2nativepad(priv.get(), priv_native, sizeof(priv_native)) < 0) {
    return nullptr;
  }
  OSSL_PARAM params[4];
  params[0] =
      OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, const_cast<char*>("P-256"), 0);
  params[1] = OSSL_PARAM_construct_BN(OSSL_PKEY_PARAM_PRIV_KEY, priv_native, sizeof(priv_native));
  params[2] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, pub, sizeof(pub));
  params[3] = OSSL_PARAM_construct_end();
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* made = nullptr;
  bool ok = ctx && EVP_PKEY_fromdata_init(ctx.get()) == 1 &&
            EVP_PKEY_fromdata(ctx.get(), &made, EVP_PKEY_KEYPAIR, params) == 1;
  OPENSSL_cleanse(priv_native, sizeof(priv_native));
  return ok ? EvpPkeyPtr(made) : nullptr;
}

}  // namespace

size_t KeyShareLength(uint16_t group) {
  switch (group) {
    case kX25519:
      return kX25519Length;
    case kSecp256r1:
      return kP256ShareLength;
  }
  return 0;
}

std::unique_ptr<KeyExchange> KeyExchange::Create() {
  std::unique_ptr<KeyExchange> kx(new KeyExchange());
  bool ok = kx->InitGroup(kx->x25519_, kX25519) && kx->InitGroup(kx->p256_, kSecp256r1);
  ERR_clear_error();
  return ok ? std::move(kx) : nullptr;
}

KeyExchange::~KeyExchange() = default;  // libcrypto wipes the keys it frees

bool KeyExchange::InitGroup(Group& g, uint16_t id) {
  const bool ec = id == kSecp256r1;
  g.id = id;
  g.share_length = KeyShareLength(id);
  if (!ec) {
    g.base.reset(EVP_PKEY_new_raw_public_key_ex(nullptr, "X25519", nullptr, kX25519BasePoint,
                                                kX25519Length));
    if (!g.base) return false;
  }
  // A fetch by name, here at start-up; every later P-256 keygen reuses this context (X25519's
  // makes the first key only; its later ones come from the fromdata context below).
  g.keygen.reset(EVP_PKEY_CTX_new_from_name(nullptr, ec ? "EC" : "X25519", nullptr));
  if (!g.keygen || EVP_PKEY_keygen_init(g.keygen.get()) != 1 ||
      (ec && EVP_PKEY_CTX_set_group_name(g.keygen.get(), "P-256") != 1)) {
    return false;
  }
  EVP_PKEY* key = nullptr;
  if (EVP_PKEY_keygen(g.keygen.get(), &key) != 1) return false;
  g.key.reset(key);
  g.derive.reset(EVP_PKEY_CTX_new_from_pkey(nullptr, g.key.get(), nullptr));
  if (!g.derive || EVP_PKEY_derive_init(g.derive.get()) != 1) return false;
  // The peer slot starts as a copy of our public key; each client's share replaces it.
  g.peer = PublicKeyOf(g.key.get(), ec);
  if (!g.peer) return false;
  if (!ec) {
    // From here X25519 keys come from fromdata into the same EVP_PKEY (NextX25519Key).
    g.keygen.reset(EVP_PKEY_CTX_new_from_name(nullptr, "X25519", nullptr));
    if (!g.keygen || EVP_PKEY_fromdata_init(g.keygen.get()) != 1) return false;
    return NextX25519Key(g);
  }
  g.ready = true;
  return true;
}

bool KeyExchange::NextX25519Key(Group& g, absl::Span<const uint8_t> seed) {
  g.ready = false;
  uint8_t private_key[kPrivateKeyLength];
  // The public half is a placeholder (the base point's bytes): given one, fromdata does not
  // compute it from the private key (the slow path this avoids); nothing reads it, g.share is
  // the public key.
  OSSL_PARAM params[3];
  params[0] =
      OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PRIV_KEY, private_key, kPrivateKeyLength);
  params[1] = OSSL_PARAM_construct_octet_string(
      OSSL_PKEY_PARAM_PUB_KEY, const_cast<uint8_t*>(kX25519BasePoint), kX25519Length);
  params[2] = OSSL_PARAM_construct_end();
  EVP_PKEY* key = g.key.get();
  size_t length = kX25519Length;
  const bool seeded = seed.size() == kPrivateKeyLength;
  if (seeded) std::memcpy(private_key, seed.data(), kPrivateKeyLength);
  const bool drawn = seeded || RAND_priv_bytes(private_key, kPrivateKeyLength) == 1;
  const bool ok = drawn && EVP_PKEY_fromdata(g.keygen.get(), &key, EVP_PKEY_KEYPAIR, params) == 1 &&
                  key == g.key.get() && EVP_PKEY_derive_init(g.derive.get()) == 1 &&
                  EVP_PKEY_derive_set_peer_ex(g.derive.get(), g.base.get(), 0) == 1 &&
                  EVP_PKEY_derive(g.derive.get(), g.share, &length) == 1 && length == kX25519Length;
  OPENSSL_cleanse(private_key, sizeof(private_key));
  g.ready = ok;
  return ok;
}

bool KeyExchange::NextKey(Group& g, absl::Span<const uint8_t> seed) {
  if (g.id == kX25519) return NextX25519Key(g, seed);
  // EVP_PKEY_generate() into the same EVP_PKEY: the old key data is freed (and wiped by its
  // keymgmt) and the derive context bound to this EVP_PKEY picks the new data up on init.
  EVP_PKEY* key = g.key.get();
  g.ready = EVP_PKEY_keygen(g.keygen.get(), &key) == 1 && key == g.key.get() &&
            EVP_PKEY_derive_init(g.derive.get()) == 1;
  return g.ready;
}

KeyExchange::Group* KeyExchange::Find(uint16_t group) {
  switch (group) {
    case kX25519:
      return &x25519_;
    case kSecp256r1:
      return &p256_;
  }
  return nullptr;
}

uint8_t KeyExchange::LoadPeer(Group& g, absl::Span<const uint8_t> client_share) {
  // §4.2.8.2: X25519 shares are 32 bytes; P-256 shares are the uncompressed point, legacy_form
  // 4 then X and Y (65 bytes). The length excludes the one-byte point at infinity.
  if (client_share.size() != g.share_length ||
      (g.id == kSecp256r1 && client_share[0] != POINT_CONVERSION_UNCOMPRESSED)) {
    return kIllegalParameter;
  }
  // For P-256 the decoding (EC_POINT_oct2point) is the validation §4.2.8.2 asks for: X and Y
  // below p and (X, Y) on the curve, else it fails; infinity has no 65-byte form. The tests
  // pin that refusal for each case. EVP_PKEY_public_check_quick would repeat it at ~12 µs (an
  // inversion to affine form, measured 2026-12-03), and the subgroup check (n·Q = O) of the
  // full check is not needed on these cofactor-1 curves. X25519 takes any 32 bytes (RFC 7748
  // §5); its low-order points are caught by the all-zero output in Finish().
  if (EVP_PKEY_set1_encoded_public_key(g.peer.get(), client_share.data(), client_share.size()) !=
      1) {
    return kIllegalParameter;
  }
  return 0;
}

KeyExchange::Result KeyExchange::Finish(Group& g, EVP_PKEY_CTX* derive, EVP_PKEY* ours,
                                        absl::Span<const uint8_t> our_share,
                                        absl::Span<uint8_t> server_share,
                                        absl::Span<uint8_t> shared_secret) {
  // The peer is validated in LoadPeer(); libcrypto's own check (validate_peer = 1) would
  // make a context and, for P-256, run the full check with its scalar multiplication.
  size_t secret_length = kSecretLength;
  if (EVP_PKEY_derive_set_peer_ex(derive, g.peer.get(), 0) != 1) {
    return Fail(kInternalError, shared_secret);
  }
  if (EVP_PKEY_derive(derive, shared_secret.data(), &secret_length) != 1) {
    // libcrypto's X25519 refuses an all-zero output itself (RFC 7748 §6.1); nothing else in
    // it depends on the client's share.
    return Fail(g.id == kX25519 ? kIllegalParameter : kInternalError, shared_secret);
  }
  static constexpr uint8_t kZeros[kSecretLength] = {};
  if (secret_length != kSecretLength) return Fail(kInternalError, shared_secret);
  // §7.4.2: "MUST check whether the computed Diffie-Hellman shared secret is the all-zero
  // value and abort if so", in constant time, whatever the library already did.
  if (g.id == kX25519 && CRYPTO_memcmp(shared_secret.data(), kZeros, kSecretLength) == 0) {
    return Fail(kIllegalParameter, shared_secret);
  }
  if (!our_share.empty()) {
    std::memcpy(server_share.data(), our_share.data(), our_share.size());
    return {true, 0, our_share.size(), secret_length};
  }
  size_t share_length = 0;
  if (EVP_PKEY_get_octet_string_param(ours, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, server_share.data(),
                                      server_share.size(), &share_length) != 1 ||
      share_length != g.share_length) {
    return Fail(kInternalError, shared_secret);
  }
  return {true, 0, share_length, secret_length};
}

KeyExchange::Result KeyExchange::Exchange(uint16_t group, absl::Span<const uint8_t> client_share,
                                          absl::Span<uint8_t> server_share,
                                          absl::Span<uint8_t> shared_secret,
                                          absl::Span<const uint8_t> next_key_seed) {
  Group* g = Find(group);
  if (g == nullptr || server_share.size() < kMaxKeyShareLength ||
      shared_secret.size() < kMaxSharedSecretLength || (!g->ready && !NextKey(*g))) {
    return Fail(kInternalError, shared_secret);
  }
  // The share is checked before any key is spent on it.
  if (uint8_t alert = LoadPeer(*g, client_share); alert != 0) return Fail(alert, shared_secret);
  const absl::Span<const uint8_t> our_share =
      g->id == kX25519 ? absl::Span<const uint8_t>(g->share, kX25519Length)
                       : absl::Span<const uint8_t>();
  Result result = Finish(*g, g->derive.get(), g->key.get(), our_share, server_share, shared_secret);
  // A key that derived a secret is never used again: the next one replaces it now. A
  // failure leaves the key unused (nothing was sent), so it stays for the next handshake.
  if (result.ok && !NextKey(*g, next_key_seed)) ERR_clear_error();  // retried by the next one
  return result;
}

KeyExchange::Result KeyExchange::ExchangeWithPrivateKey(uint16_t group,
                                                        absl::Span<const uint8_t> private_key,
                                                        absl::Span<const uint8_t> client_share,
                                                        absl::Span<uint8_t> server_share,
                                                        absl::Span<uint8_t> shared_secret) {
  Group* g = Find(group);
  if (g == nullptr || private_key.size() != kPrivateKeyLength ||
      server_share.size() < kMaxKeyShareLength || shared_secret.size() < kMaxSharedSecretLength) {
    return Fail(kInternalError, shared_secret);
  }
  EvpPkeyPtr ours(group == kX25519
                      ? EVP_PKEY_new_raw_private_key_ex(nullptr, "X25519", nullptr,
                                                        private_key.data(), private_key.size())
                      : P256FromPrivate(private_key).release());
  EvpPkeyCtxPtr derive(ours ? EVP_PKEY_CTX_new_from_pkey(nullptr, ours.get(), nullptr) : nullptr);
  if (!derive || EVP_PKEY_derive_init(derive.get()) != 1) {
    return Fail(kInternalError, shared_secret);
  }
  if (uint8_t alert = LoadPeer(*g, client_share); alert != 0) return Fail(alert, shared_secret);
  return Finish(*g, derive.get(), ours.get(), {}, server_share, shared_secret);
}

}  // namespace onepass::tls::tls13
