// The public-key work of one full TLS 1.3 handshake on the server (issue 39): the (EC)DHE
// keygen + derive and the CertificateVerify ECDSA P-256 signature, three ways, in thread
// CPU [ns] per call and libcrypto allocations per call:
//   naive:  the calls OpenSSL 3.0's TLS makes per handshake (contexts made by name, the peer
//           key made from parameters, the peer fully checked, EVP_DigestSign on a new
//           EVP_MD_CTX);
//   reused: tls13::KeyExchange::Exchange and tls13::CertificateSigner::Sign;
//   floor:  the primitive alone on an initialised context (keygen into one EVP_PKEY,
//           EVP_PKEY_derive with the peer set, EVP_PKEY_sign of a digest): what no caller
//           can go below through EVP.
//   <release build>/loadtest/tls13_primitives_bench [iterations=2000] [rounds=7]
// Each figure: the median and the best of the rounds, the cases interleaved in each round. Figures
// in server/tls/tls13/crypto/key_exchange.h.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "server/tls/tls13/crypto/certificate_signer.h"
#include "server/tls/tls13/crypto/key_exchange.h"
#include "server/tls/tls13/wire/client_hello.h"

namespace onepass::tls::tls13 {
namespace {

// libcrypto's allocations, counted through CRYPTO_set_mem_functions (set before any other
// libcrypto call).
std::atomic<long> g_allocs{0};
void* CountedMalloc(size_t n, const char*, int) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n);
}
void* CountedRealloc(void* p, size_t n, const char*, int) {
  if (p == nullptr) g_allocs.fetch_add(1, std::memory_order_relaxed);
  return std::realloc(p, n);
}
void CountedFree(void* p, const char*, int) { std::free(p); }

uint64_t ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000u + ts.tv_nsec;
}

struct Figure {
  double nanos = 0;  // median round
  double best = 0;   // fastest round
  double allocs = 0;
};

struct Case {
  Case(const char* n, std::function<bool()> s) : name(n), step(std::move(s)) {}
  const char* name;
  std::function<bool()> step;
  std::vector<double> nanos;  // [ns] per call, one per round
  long allocs = 0;            // in the last round
};

// Runs every case `n` times per round, the cases interleaved in each round so that a change
// of load on this shared machine falls on all of them alike.
void MeasureAll(int n, int rounds, std::vector<Case>& cases) {
  for (int round = 0; round < rounds; ++round) {
    for (Case& c : cases) {
      long a0 = g_allocs.load();
      uint64_t t0 = ThreadCpuNanos();
      for (int i = 0; i < n; ++i) {
        if (!c.step()) {
          std::fprintf(stderr, "%s failed\n", c.name);
          ERR_print_errors_fp(stderr);
          std::exit(1);
        }
      }
      c.nanos.push_back(double(ThreadCpuNanos() - t0) / n);
      c.allocs = g_allocs.load() - a0;
    }
  }
}

Figure Result(Case c, int n) {
  std::sort(c.nanos.begin(), c.nanos.end());
  return {c.nanos[c.nanos.size() / 2], c.nanos.front(), double(c.allocs) / n};
}

using PkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyDeleter>;
using CtxPtr = std::unique_ptr<EVP_PKEY_CTX, EvpPkeyCtxDeleter>;

// OpenSSL 3.0's server side of one key share (ssl/statem/extensions_srvr.c, ssl/s3_lib.c):
// ssl_generate_param_group + tls13_set_encoded_pub_key for the peer, ssl_generate_pkey_group
// for our key, EVP_PKEY_get1_encoded_public_key for the share, ssl_derive for the secret.
bool NaiveExchange(bool ec, const uint8_t* client_share, size_t client_length) {
  const char* name = ec ? "EC" : "X25519";
  bool ok = true;
  EVP_PKEY* peer = nullptr;
  EVP_PKEY_CTX* pctx = EVP_PKEY_CTX_new_from_name(nullptr, name, nullptr);
  ok = ok && EVP_PKEY_paramgen_init(pctx) == 1 &&
       (!ec || EVP_PKEY_CTX_set_group_name(pctx, "P-256") == 1) &&
       EVP_PKEY_paramgen(pctx, &peer) == 1 &&
       EVP_PKEY_set1_encoded_public_key(peer, client_share, client_length) == 1;
  EVP_PKEY_CTX_free(pctx);
  EVP_PKEY* ours = nullptr;
  pctx = EVP_PKEY_CTX_new_from_name(nullptr, name, nullptr);
  ok = ok && EVP_PKEY_keygen_init(pctx) == 1 &&
       (!ec || EVP_PKEY_CTX_set_group_name(pctx, "P-256") == 1) &&
       EVP_PKEY_keygen(pctx, &ours) == 1;
  EVP_PKEY_CTX_free(pctx);
  unsigned char* share = nullptr;
  ok = ok && EVP_PKEY_get1_encoded_public_key(ours, &share) > 0;
  OPENSSL_free(share);
  pctx = ok ? EVP_PKEY_CTX_new_from_pkey(nullptr, ours, nullptr) : nullptr;
  size_t length = 0;
  unsigned char* secret = nullptr;
  ok = ok && EVP_PKEY_derive_init(pctx) == 1 && EVP_PKEY_derive_set_peer(pctx, peer) == 1 &&
       EVP_PKEY_derive(pctx, nullptr, &length) == 1 &&
       (secret = static_cast<unsigned char*>(OPENSSL_malloc(length))) != nullptr &&
       EVP_PKEY_derive(pctx, secret, &length) == 1;
  OPENSSL_clear_free(secret, length);
  EVP_PKEY_CTX_free(pctx);
  EVP_PKEY_free(ours);
  EVP_PKEY_free(peer);
  return ok;
}

// ssl/statem/statem_lib.c tls_construct_cert_verify: a new EVP_MD_CTX, EVP_DigestSignInit_ex
// by digest name, EVP_DigestSign.
bool NaiveSign(EVP_PKEY* key, const uint8_t* content, size_t length) {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  unsigned char signature[CertificateSigner::kMaxSignatureLength];
  size_t signature_length = sizeof(signature);
  bool ok = EVP_DigestSignInit_ex(md, nullptr, "SHA256", nullptr, nullptr, key, nullptr) == 1 &&
            EVP_DigestSign(md, signature, &signature_length, content, length) == 1;
  EVP_MD_CTX_free(md);
  return ok;
}

struct Floor {
  CtxPtr keygen, derive, sign;
  PkeyPtr key, peer;
  bool Init(EVP_PKEY* signing_key, bool ec) {
    keygen.reset(EVP_PKEY_CTX_new_from_name(nullptr, ec ? "EC" : "X25519", nullptr));
    EVP_PKEY* k = nullptr;
    EVP_PKEY* p = nullptr;
    if (EVP_PKEY_keygen_init(keygen.get()) != 1 ||
        (ec && EVP_PKEY_CTX_set_group_name(keygen.get(), "P-256") != 1) ||
        EVP_PKEY_keygen(keygen.get(), &k) != 1 || EVP_PKEY_keygen(keygen.get(), &p) != 1) {
      return false;
    }
    key.reset(k);
    peer.reset(p);
    derive.reset(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
    sign.reset(EVP_PKEY_CTX_new_from_pkey(nullptr, signing_key, nullptr));
    return EVP_PKEY_derive_init(derive.get()) == 1 &&
           EVP_PKEY_derive_set_peer_ex(derive.get(), peer.get(), 0) == 1 &&
           EVP_PKEY_sign_init(sign.get()) == 1;
  }
  bool Keygen() {
    EVP_PKEY* k = key.get();
    return EVP_PKEY_keygen(keygen.get(), &k) == 1;
  }
  bool Derive() {
    unsigned char secret[64];
    size_t length = sizeof(secret);
    return EVP_PKEY_derive(derive.get(), secret, &length) == 1;
  }
  bool Sign() {
    static const unsigned char kDigest[32] = {1};
    unsigned char signature[CertificateSigner::kMaxSignatureLength];
    size_t length = sizeof(signature);
    return EVP_PKEY_sign(sign.get(), signature, &length, kDigest, sizeof(kDigest)) == 1;
  }
};

void Row(const char* what, Figure f) {
  std::printf("| %-44s | %7.0f | %7.0f | %6.1f |\n", what, f.nanos, f.best, f.allocs);
}

int Main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2000;
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 7;
  PkeyPtr signing_key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  auto kx = KeyExchange::Create();
  auto signer = CertificateSigner::Create(signing_key.get(), nullptr);
  if (!signing_key || !kx || !signer) {
    std::fprintf(stderr, "set-up failed\n");
    return 1;
  }
  // §4.4.3's content: 64 spaces, the context string, 0, a SHA-256 transcript hash.
  std::vector<uint8_t> content(64 + 33 + 1 + 32, 0x20);
  // One client share per group, made outside the timing.
  uint8_t client[2][kMaxKeyShareLength];
  size_t client_length[2] = {};
  for (int ec = 0; ec < 2; ++ec) {
    PkeyPtr c(ec ? EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")
                 : EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519"));
    if (!c ||
        EVP_PKEY_get_octet_string_param(c.get(), OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, client[ec],
                                        kMaxKeyShareLength, &client_length[ec]) != 1) {
      return 1;
    }
  }
  uint8_t share[kMaxKeyShareLength], secret[kMaxSharedSecretLength];
  uint8_t signature[CertificateSigner::kMaxSignatureLength];
  uint8_t randoms[80];
  const auto reused = [&](int ec) {
    return kx
        ->Exchange(ec ? kGroupSecp256r1 : kGroupX25519,
                   absl::MakeConstSpan(client[ec], client_length[ec]), absl::MakeSpan(share),
                   absl::MakeSpan(secret))
        .ok;
  };
  const auto sign = [&] { return signer->Sign(content, absl::MakeSpan(signature)) > 0; };
  const auto naive_sign = [&] {
    return NaiveSign(signing_key.get(), content.data(), content.size());
  };
  Floor floor[2];
  if (!floor[0].Init(signing_key.get(), false) || !floor[1].Init(signing_key.get(), true)) {
    return 1;
  }
  std::printf(
      "%d calls x %d rounds, OpenSSL %s; thread CPU [ns] and libcrypto allocations "
      "per call (median round)\n\n",
      n, rounds, OpenSSL_version(OPENSSL_VERSION_STRING));
  std::printf("| %-44s | %7s | %7s | %6s |\n|---|---:|---:|---:|\n", "per call", "median", "best",
              "allocs");
  std::vector<Case> cases = {
      {"X25519 keygen+derive, naive (OpenSSL TLS)",
       [&] { return NaiveExchange(false, client[0], client_length[0]); }},
      {"X25519 keygen+derive, KeyExchange::Exchange", [&] { return reused(0); }},
      {"X25519 floor: keygen alone", [&] { return floor[0].Keygen(); }},
      {"X25519 floor: derive alone", [&] { return floor[0].Derive(); }},
      {"P-256 keygen+derive, naive (OpenSSL TLS)",
       [&] { return NaiveExchange(true, client[1], client_length[1]); }},
      {"P-256 keygen+derive, KeyExchange::Exchange", [&] { return reused(1); }},
      {"P-256 floor: keygen alone", [&] { return floor[1].Keygen(); }},
      {"P-256 floor: derive alone", [&] { return floor[1].Derive(); }},
      {"ECDSA P-256 sign, naive (EVP_DigestSign)", naive_sign},
      {"ECDSA P-256 sign, CertificateSigner::Sign", sign},
      {"ECDSA P-256 sign floor: EVP_PKEY_sign alone", [&] { return floor[0].Sign(); }},
      // A handshake's randoms (ServerHello 32, first ticket 16, next X25519 key 32): in two
      // DRBG calls, as before 2026-12-04, and in the one the engine makes now.
      {"randoms: RAND_bytes(48)+RAND_priv_bytes(32)",
       [&] { return RAND_bytes(randoms, 48) == 1 && RAND_priv_bytes(randoms + 48, 32) == 1; }},
      {"randoms: RAND_priv_bytes(80), one call", [&] { return RAND_priv_bytes(randoms, 80) == 1; }},
  };
  MeasureAll(n, rounds, cases);
  std::vector<Figure> f;
  for (const Case& c : cases) {
    f.push_back(Result(c, n));
    Row(c.name, f.back());
  }
  std::printf(
      "\n| handshake (kx + sign), median [ns] | naive | reused | floor | reused/floor "
      "| naive/floor |\n|---|---:|---:|---:|---:|---:|\n");
  for (int ec = 0; ec < 2; ++ec) {
    const Figure* g = &f[4 * ec];
    double naive = g[0].nanos + f[8].nanos;
    double ours = g[1].nanos + f[9].nanos;
    double bare = g[2].nanos + g[3].nanos + f[10].nanos;
    std::printf("| %s + ECDSA P-256 | %.0f | %.0f | %.0f | %.2f | %.2f |\n",
                ec ? "P-256" : "X25519", naive, ours, bare, ours / bare, naive / bare);
  }
  return 0;
}

}  // namespace
}  // namespace onepass::tls::tls13

int main(int argc, char** argv) {
  // Before any other libcrypto call, or it refuses.
  CRYPTO_set_mem_functions(onepass::tls::tls13::CountedMalloc, onepass::tls::tls13::CountedRealloc,
                           onepass::tls::tls13::CountedFree);
  return onepass::tls::tls13::Main(argc, argv);
}
