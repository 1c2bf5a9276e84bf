// tls_library_bench's wolfSSL server (Debian 12's libwolfssl 5.5): the least a wolfSSL
// server needs for onepassd's exchange. A context made once (chain, key, TLS 1.3 only,
// X25519 then P-256, one ticket per handshake under wolfSSL's own ticket key, no session
// cache: stateless resumption as onepassd does it); per connection a WOLFSSL object over
// receive/send callbacks on memory. Its own translation unit: wolfSSL's headers define
// OpenSSL's names as macros.
#include <wolfssl/options.h>
#include <wolfssl/ssl.h>
#include <wolfssl/wolfcrypt/curve25519.h>
#include <wolfssl/wolfcrypt/ecc.h>
#include <wolfssl/wolfcrypt/memory.h>
#include <wolfssl/wolfcrypt/random.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "loadtest/tls_library_bench/bench_server.h"

namespace onepass::tls_bench {
namespace {

std::atomic<uint64_t> allocations{0};
void* CountingMalloc(size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n);
}
void CountingFree(void* p) { std::free(p); }
void* CountingRealloc(void* p, size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::realloc(p, n);
}

class WolfsslServer : public BenchServer {
 public:
  WolfsslServer() = default;
  ~WolfsslServer() override {
    wolfSSL_free(ssl_);
    wolfSSL_CTX_free(ctx_);
  }

  bool Init(const std::string& chain_pem, const std::string& key_pem) {
    ctx_ = wolfSSL_CTX_new(wolfTLSv1_3_server_method());
    if (ctx_ == nullptr) return false;
    int groups[] = {WOLFSSL_ECC_X25519, WOLFSSL_ECC_SECP256R1};
    const auto* chain = reinterpret_cast<const unsigned char*>(chain_pem.data());
    const auto* key = reinterpret_cast<const unsigned char*>(key_pem.data());
    if (wolfSSL_CTX_use_certificate_chain_buffer_format(ctx_, chain, chain_pem.size(),
                                                        WOLFSSL_FILETYPE_PEM) != WOLFSSL_SUCCESS ||
        wolfSSL_CTX_use_PrivateKey_buffer(ctx_, key, key_pem.size(), WOLFSSL_FILETYPE_PEM) !=
            WOLFSSL_SUCCESS ||
        wolfSSL_CTX_set_groups(ctx_, groups, 2) != WOLFSSL_SUCCESS ||
        wolfSSL_CTX_set_num_tickets(ctx_, 1) != WOLFSSL_SUCCESS) {
      return false;
    }
    // Stateless: the session lives in the ticket, nothing is kept per client.
    wolfSSL_CTX_set_session_cache_mode(ctx_, WOLFSSL_SESS_CACHE_OFF);
    wolfSSL_CTX_SetIORecv(ctx_, Receive);
    wolfSSL_CTX_SetIOSend(ctx_, Send);
    return true;
  }

  std::string Hello(const std::string& hello) override {
    wolfSSL_free(ssl_);
    ssl_ = wolfSSL_new(ctx_);
    if (ssl_ == nullptr) return "";
    wolfSSL_SetIOReadCtx(ssl_, this);
    wolfSSL_SetIOWriteCtx(ssl_, this);
    char dot[] = "dot";
    wolfSSL_UseALPN(ssl_, dot, 3, WOLFSSL_ALPN_CONTINUE_ON_MISMATCH);
    in_ = hello;
    out_.clear();
    if (wolfSSL_accept(ssl_) == WOLFSSL_SUCCESS ||
        wolfSSL_get_error(ssl_, 0) != WOLFSSL_ERROR_WANT_READ) {
      return "";
    }
    return out_;
  }

  std::string Answer(const std::string& flight, bool* resumed) override {
    in_ = flight;
    out_.clear();
    if (wolfSSL_accept(ssl_) != WOLFSSL_SUCCESS) return "";
    *resumed = wolfSSL_session_reused(ssl_) == 1;
    char room[512];
    const int got = wolfSSL_read(ssl_, room, sizeof(room));
    if (got <= 0 || wolfSSL_write(ssl_, room, got) != got) return "";
    wolfSSL_shutdown(ssl_);  // close_notify; we do not wait for the client's
    return out_;
  }

 private:
  static int Receive(WOLFSSL*, char* data, int size, void* ctx) {
    auto* self = static_cast<WolfsslServer*>(ctx);
    if (self->in_.empty()) return WOLFSSL_CBIO_ERR_WANT_READ;
    const size_t n = std::min(static_cast<size_t>(size), self->in_.size());
    std::memcpy(data, self->in_.data(), n);
    self->in_.erase(0, n);
    return static_cast<int>(n);
  }
  static int Send(WOLFSSL*, char* data, int size, void* ctx) {
    static_cast<WolfsslServer*>(ctx)->out_.append(data, size);
    return size;
  }

  WOLFSSL_CTX* ctx_ = nullptr;
  WOLFSSL* ssl_ = nullptr;
  std::string in_, out_;
};

}  // namespace

std::unique_ptr<BenchServer> MakeWolfsslServer(const std::string& chain_pem,
                                               const std::string& key_pem) {
  static const bool initialized = [] {
    wolfSSL_SetAllocators(CountingMalloc, CountingFree, CountingRealloc);
    return wolfSSL_Init() == WOLFSSL_SUCCESS;
  }();
  if (!initialized) return nullptr;
  auto server = std::make_unique<WolfsslServer>();
  if (!server->Init(chain_pem, key_pem)) return nullptr;
  return server;
}

bool WolfsslFloor(int n, double* sign_micros, double* x25519_micros) {
  WC_RNG rng;
  if (wc_InitRng(&rng) != 0) return false;
  bool ok = true;
  ecc_key ec;
  unsigned char digest[32] = {1};
  unsigned char sig[128];
  ok = wc_ecc_init(&ec) == 0 && wc_ecc_make_key_ex(&rng, 32, &ec, ECC_SECP256R1) == 0;
  uint64_t t0 = ThreadCpuNanos();
  for (int i = 0; ok && i < n; ++i) {
    word32 size = sizeof(sig);
    ok = wc_ecc_sign_hash(digest, sizeof(digest), sig, &size, &rng, &ec) == 0;
  }
  *sign_micros = (ThreadCpuNanos() - t0) / 1000.0 / n;
  wc_ecc_free(&ec);
  curve25519_key peer;
  ok = ok && wc_curve25519_init(&peer) == 0 && wc_curve25519_make_key(&rng, 32, &peer) == 0;
  t0 = ThreadCpuNanos();
  for (int i = 0; ok && i < n; ++i) {
    curve25519_key mine;
    unsigned char secret[32];
    word32 size = sizeof(secret);
    ok = wc_curve25519_init(&mine) == 0 && wc_curve25519_make_key(&rng, 32, &mine) == 0 &&
         wc_curve25519_shared_secret(&mine, &peer, secret, &size) == 0;
    wc_curve25519_free(&mine);
  }
  *x25519_micros = (ThreadCpuNanos() - t0) / 1000.0 / n / 2;
  wc_curve25519_free(&peer);
  wc_FreeRng(&rng);
  return ok;
}

std::string WolfsslVersion() { return wolfSSL_lib_version(); }

uint64_t WolfsslAllocations() { return allocations.load(std::memory_order_relaxed); }

}  // namespace onepass::tls_bench
