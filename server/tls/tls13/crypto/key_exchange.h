// The server's ephemeral (EC)DHE (RFC 8446 §4.2.8, §7.4) for X25519 and secp256r1, over
// libcrypto's EVP_PKEY with every context made once per worker.
//
// Per group the worker keeps a key-generation context (initialised once), its ephemeral key
// and a derive context bound to that key, and one peer EVP_PKEY whose public key is replaced
// in place for each client (EVP_PKEY_set1_encoded_public_key). Each Exchange() uses the key
// generated at the end of the previous one and then generates the next: the key held between
// handshakes has never derived a secret, so an idle worker keeps nothing that would open a
// past connection (forward secrecy), and a client share that fails validation costs no key
// generation. Against OpenSSL 3.0's TLS, which per handshake makes a key-generation context,
// a parameters context and a peer EVP_PKEY, a derive context and a second context to check
// the peer (a full check, with the n·Q scalar multiplication RFC 8446 §4.2.8.2 does not ask
// for on these curves), this leaves EVP_PKEY_keygen (P-256; X25519 below) into the same EVP_PKEY
// and EVP_PKEY_derive_init on the same context (libcrypto still allocates the key data and the
// derive state inside those; no public API reuses them).
//
// Measured 2026-12-04 (Release -O3, OpenSSL 3.0.19, this 2-core machine, quiet, CPU 0), thread
// CPU [µs] and libcrypto allocations per call, median of 15 rounds of 2000:
//   cmake --preset release && cmake --build build/release --target tls13_primitives_bench
//   taskset -c 0 build/release/loadtest/tls13_primitives_bench 2000 15
//                        naive (OpenSSL TLS's calls)   here              floor (bare primitive)
//   X25519 kx             62.1 µs, 33 allocs            54.4 µs, 11       56.4 (keygen 30.6 +
//                                                                              derive 25.8)
//   P-256 kx             129.8 µs, 378 allocs           59.4 µs, 101      52.5 (9.9 + 42.6)
//   ECDSA P-256 sign      20.3 µs, 60 allocs            17.8 µs, 42       17.6 (EVP_PKEY_sign)
//   handshake, X25519     82.4 µs                       72.2 µs = 0.98 × floor (naive 1.11 ×)
//   handshake, P-256     150.0 µs                       77.2 µs = 1.10 × floor (naive 2.14 ×)
// (X25519 here is under the keygen + derive floor: two ladders, see below.)
// P-256's difference is mostly OpenSSL's full peer check (n·Q) and its contexts; what is
// left above the floor here is the encoding of our public key (an inversion to affine, ~6
// µs, which the server cannot skip) and the per-key derive_init. X25519's keygen costs more
// than its derive in OpenSSL 3.0 (measured: its public key is computed by another code path
// than the derive's Montgomery ladder). So an X25519 key is made as RFC 7748 §6.1 defines its
// public half, K = X25519(k, 9): 32 bytes from RAND_priv_bytes loaded into the same EVP_PKEY
// (EVP_PKEY_fromdata with a placeholder public half, which libcrypto then does not compute)
// and one derive against the base point on the same derive context, the ladder's speed
// instead of keygen's: KeyExchange::Exchange 54.7 against 56.9 µs before, and the engine's
// handshakes 2.2 µs (full) and 2.5 µs (resumed) cheaper in loadtest/tls_library_bench,
// 2026-12-04; the key and secret are checked against libcrypto's own (key_exchange_test).
#ifndef ONEPASS_SERVER_TLS_TLS13_CRYPTO_KEY_EXCHANGE_H_
#define ONEPASS_SERVER_TLS_TLS13_CRYPTO_KEY_EXCHANGE_H_

#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/types/span.h"

namespace onepass::tls::tls13 {

inline constexpr size_t kMaxKeyShareLength = 65;  // P-256 uncompressed point
inline constexpr size_t kMaxSharedSecretLength = 32;
// The random bytes the next X25519 private key is made of, when the caller draws them: one
// DRBG call per handshake for these and its other randoms, since each call costs ~0.6 µs
// whatever its length (the DRBG's lock and fork check; the "randoms" rows of
// loadtest/tls13_primitives_bench).
inline constexpr size_t kNextKeySeedLength = 32;

// The key share length of NamedGroup `group` (§4.2.7): 32 for x25519 (0x001d), 65 for
// secp256r1 (0x0017), 0 for a group not served here. (The group constants themselves are
// wire/client_hello.h's kGroupX25519 and kGroupSecp256r1.)
size_t KeyShareLength(uint16_t group);

struct EvpPkeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct EvpPkeyCtxDeleter {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;
using EvpPkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, EvpPkeyCtxDeleter>;

// One per worker thread (not thread-safe); made once, reused for every handshake. Every
// failure leaves libcrypto's error queue of the thread empty (the OpenSSL engine on the
// same thread reads it) and the shared_secret span wiped.
class KeyExchange {
 public:
  // Null when libcrypto lacks a group (or a first key cannot be made).
  static std::unique_ptr<KeyExchange> Create();
  ~KeyExchange();
  KeyExchange(const KeyExchange&) = delete;
  KeyExchange& operator=(const KeyExchange&) = delete;

  struct Result {
    bool ok = false;
    uint8_t alert = 0;  // when !ok: 47 illegal_parameter, 80 internal_error
    size_t share_length = 0;
    size_t secret_length = 0;
  };

  // A fresh key pair for `group` and the shared secret with the client's share: our public
  // key into server_share (≥ kMaxKeyShareLength), the secret into shared_secret
  // (≥ kMaxSharedSecretLength). A client share of the wrong length, not a valid point
  // (§4.2.8.2: uncompressed form only, on the curve) or giving the all-zero X25519 output
  // (RFC 7748 §6.1, RFC 8446 §7.4.2): ok false, alert 47. An unknown group, spans too
  // short or a libcrypto failure: ok false, alert 80. After a success the next key is made:
  // for X25519 from `next_key_seed` when it has kNextKeySeedLength bytes (fresh from the DRBG,
  // wiped by the caller), else from RAND_priv_bytes; a P-256 key draws its own.
  Result Exchange(uint16_t group, absl::Span<const uint8_t> client_share,
                  absl::Span<uint8_t> server_share, absl::Span<uint8_t> shared_secret,
                  absl::Span<const uint8_t> next_key_seed = {});

  // The same with our private key given (32 bytes for both groups; tests against RFC 8448
  // and RFC 7748 vectors). Allocates its own key and context: not for the hot path.
  Result ExchangeWithPrivateKey(uint16_t group, absl::Span<const uint8_t> private_key,
                                absl::Span<const uint8_t> client_share,
                                absl::Span<uint8_t> server_share,
                                absl::Span<uint8_t> shared_secret);

 private:
  // What one group keeps between handshakes.
  struct Group {
    uint16_t id = 0;
    size_t share_length = 0;
    EvpPkeyCtxPtr keygen;  // EVP_PKEY_keygen_init'd once (P-256); X25519: fromdata_init'd
    EvpPkeyPtr key;        // the next ephemeral key pair, never used yet
    EvpPkeyCtxPtr derive;  // bound to `key`, EVP_PKEY_derive_init'd for its current data
    EvpPkeyPtr peer;       // the client's public key, replaced in place
    bool ready = false;    // `key` is fresh and `derive` initialised for it
    // X25519: the base point (u = 9), and our public key X25519(k, 9) for the current `key`,
    // whose EVP_PKEY holds a placeholder public half (see the file comment).
    EvpPkeyPtr base;
    uint8_t share[kMaxKeyShareLength] = {};
  };

  KeyExchange() = default;
  bool InitGroup(Group& g, uint16_t id);
  bool NextKey(Group& g, absl::Span<const uint8_t> seed = {});
  bool NextX25519Key(Group& g, absl::Span<const uint8_t> seed = {});
  Group* Find(uint16_t group);
  // Loads and validates the client's share into g.peer: alert 0 when it is good.
  uint8_t LoadPeer(Group& g, absl::Span<const uint8_t> client_share);
  // Derives with `derive` (bound to `ours`) against g.peer and writes our public key:
  // `our_share` when given, else the one `ours` holds.
  Result Finish(Group& g, EVP_PKEY_CTX* derive, EVP_PKEY* ours, absl::Span<const uint8_t> our_share,
                absl::Span<uint8_t> server_share, absl::Span<uint8_t> shared_secret);

  Group x25519_;
  Group p256_;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_CRYPTO_KEY_EXCHANGE_H_
