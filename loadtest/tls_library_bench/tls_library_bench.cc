// Server CPU per TLS 1.3 handshake, in-process over memory, for the TLS libraries Debian 12
// has: OpenSSL 3.0 as onepassd drives it (TlsSession), GnuTLS 3.7 and wolfSSL 5.5 (minimal
// server loops), each driven by the same OpenSSL client, full and resumed (session ticket),
// beside the crypto floor of such a handshake measured the same way.
//
//   build/ci/loadtest/tls_library_bench/tls_library_bench [HANDSHAKES=500 [ROUNDS=10 [ONLY]]]
// (ONLY: just the rows whose name contains it, e.g. "onepass" under perf record.)
//
// Each connection is what a resolver's one-query DoT connection is: ClientHello; the server's
// first flight; the client's Finished with a 31-byte DNS query; the server's answer (echoed)
// with close_notify and a ticket. Only the server's calls are timed, on the thread's CPU clock
// (CLOCK_THREAD_CPUTIME_ID): the client's work is excluded. Key exchange X25519, certificate
// ECDSA P-256 (a leaf and its CA), each library's first TLS 1.3 suite. The floor: one ECDSA
// P-256 signature and two X25519 operations (key generation and shared secret) for a full
// handshake; the two X25519 operations for a resumed one (psk_dhe_ke, RFC 8446 §4.2.9), timed
// with the same clock through OpenSSL's EVP and through wolfCrypt. Also counted: heap allocations
// in the server's calls (OpenSSL's and wolfSSL's allocators; GnuTLS has no hook), with OpenSSL's
// SSL object kept per slot (SSL_clear) or made per connection (SSL_new). Prints a Markdown table;
// the ctest (label bench) runs it small, as a smoke test that every library still completes and
// resumes every handshake.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "loadtest/tls_library_bench/bench_server.h"
#include "server/tls/tls13/crypto/certificate_signer.h"
#include "server/tls/tls13/crypto/key_exchange.h"
#include "server/tls/tls13/wire/client_hello.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_session.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace onepass::tls {
namespace {

// OpenSSL's allocations while `counting` (the server's calls only).
bool counting = false;
uint64_t allocations = 0;
void* CountingMalloc(size_t n, const char*, int) {
  if (counting) ++allocations;
  return std::malloc(n);
}
void* CountingRealloc(void* p, size_t n, const char*, int) {
  if (counting) ++allocations;
  return std::realloc(p, n);
}
void CountingFree(void* p, const char*, int) { std::free(p); }

using tls_bench::ThreadCpuNanos;

// Accumulates the server's CPU time and allocations over the calls it wraps.
struct ServerMeter {
  uint64_t nanos = 0;
  uint64_t allocs = 0;
  template <typename F>
  auto Time(F&& f) {
    const uint64_t a0 = allocations + tls_bench::WolfsslAllocations();
    counting = true;
    const uint64_t t0 = ThreadCpuNanos();
    auto result = f();
    nanos += ThreadCpuNanos() - t0;
    counting = false;
    allocs += allocations + tls_bench::WolfsslAllocations() - a0;
    return result;
  }
};

const std::string kQuery(
    "\x00\x1d\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07"
    "example\x03"
    "com\x00\x00\x01\x00\x01",
    31);

using tls_bench::BenchServer;

class OpenSslServer : public BenchServer {
 public:
  OpenSslServer(std::shared_ptr<const TlsServerContext> context, bool reuse)
      : context_(std::move(context)), reuse_(reuse) {}
  std::string Hello(const std::string& hello) override {
    if (!reuse_ || session_ == nullptr) session_ = std::make_unique<TlsSession>();
    session_->Start(context_, &stats_);
    session_->Feed({reinterpret_cast<const uint8_t*>(hello.data()), hello.size()}, {});
    return TakePending();
  }
  std::string Answer(const std::string& flight, bool* resumed) override {
    uint8_t room[512];
    FeedResult r =
        session_->Feed({reinterpret_cast<const uint8_t*>(flight.data()), flight.size()}, room);
    if (r.result != TlsResult::kPlaintext) return "";
    *resumed = session_->resumed();
    session_->Encrypt({room, r.plaintext}, /*close_notify=*/true);
    return TakePending();
  }

 private:
  std::string TakePending() {
    std::string bytes(reinterpret_cast<const char*>(session_->Pending().data()),
                      session_->Pending().size());
    session_->ConsumePending(bytes.size());
    return bytes;
  }
  std::shared_ptr<const TlsServerContext> context_;
  bool reuse_;
  std::unique_ptr<TlsSession> session_;
  TlsStats stats_;
};

struct Figures {
  double micros = 0;  // server CPU per handshake [µs]
  double allocs = 0;  // heap allocations per handshake in the server's calls
  int completed = 0;
  int resumed = 0;
};

// `n` connections; with `resume`, each offers the ticket of the first one.
Figures Run(BenchServer& server, int n, bool resume) {
  ServerMeter meter, warmup;
  Figures figures;
  SSL_SESSION* ticket = nullptr;
  for (int i = 0; i < n + 1; ++i) {
    testing::ClientOptions options;
    options.session = ticket;
    testing::TestTlsClient client(options);
    client.Step();
    const std::string hello = client.TakeOutput();
    ServerMeter& m = i == 0 ? warmup : meter;
    std::string flight = m.Time([&] { return server.Hello(hello); });
    client.GiveInput(flight);
    if (!client.Step()) break;
    client.Write(kQuery);
    const std::string finished = client.TakeOutput();
    bool resumed = false;
    std::string answer = m.Time([&] { return server.Answer(finished, &resumed); });
    client.GiveInput(answer);
    bool closed = false;
    if (client.Read(&closed) != kQuery || !closed) break;
    if (i == 0) {
      if (resume) ticket = client.TakeSession();  // the warm-up connection's ticket
      continue;
    }
    ++figures.completed;
    figures.resumed += resumed;
  }
  SSL_SESSION_free(ticket);
  if (figures.completed > 0) {
    figures.micros = meter.nanos / 1000.0 / figures.completed;
    figures.allocs = double(meter.allocs) / figures.completed;
  }
  return figures;
}

// The crypto floor, through EVP like the libraries: [µs] per ECDSA P-256 signature and per
// X25519 operation (key generation or derivation, averaged).
void Floor(int n, double* sign_micros, double* x25519_micros) {
  EVP_PKEY* ec = EVP_EC_gen("P-256");
  unsigned char digest[32] = {1};
  unsigned char sig[128];
  uint64_t t0 = ThreadCpuNanos();
  for (int i = 0; i < n; ++i) {
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(ec, nullptr);
    size_t size = sizeof(sig);
    EVP_PKEY_sign_init(ctx);
    EVP_PKEY_sign(ctx, sig, &size, digest, sizeof(digest));
    EVP_PKEY_CTX_free(ctx);
  }
  *sign_micros = (ThreadCpuNanos() - t0) / 1000.0 / n;
  EVP_PKEY* peer = EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519");
  t0 = ThreadCpuNanos();
  for (int i = 0; i < n; ++i) {
    EVP_PKEY* mine = EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519");
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(mine, nullptr);
    unsigned char secret[32];
    size_t size = sizeof(secret);
    EVP_PKEY_derive_init(ctx);
    EVP_PKEY_derive_set_peer(ctx, peer);
    EVP_PKEY_derive(ctx, secret, &size);
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(mine);
  }
  *x25519_micros = (ThreadCpuNanos() - t0) / 1000.0 / n / 2;
  EVP_PKEY_free(peer);
  EVP_PKEY_free(ec);
}

// The same floor through the calls the onepass engine makes (tls13::KeyExchange and
// tls13::CertificateSigner: contexts made once, reused): [µs] per CertificateVerify signature
// (SHA-256 of its 130-byte content and the ECDSA signature) and per X25519 exchange (key
// generation and derivation together, halved to compare with the row above).
bool EngineFloor(int n, EVP_PKEY* key, double* sign_micros, double* x25519_micros) {
  std::string why;
  std::unique_ptr<tls13::CertificateSigner> signer = tls13::CertificateSigner::Create(key, &why);
  std::unique_ptr<tls13::KeyExchange> exchange = tls13::KeyExchange::Create();
  if (signer == nullptr || exchange == nullptr) return false;
  uint8_t content[130] = {0x20};
  uint8_t signature[tls13::CertificateSigner::kMaxSignatureLength];
  uint64_t t0 = ThreadCpuNanos();
  for (int i = 0; i < n; ++i) {
    if (signer->Sign(content, signature) == 0) return false;
  }
  *sign_micros = (ThreadCpuNanos() - t0) / 1000.0 / n;
  uint8_t peer[32];
  uint8_t share[tls13::kMaxKeyShareLength];
  uint8_t secret[tls13::kMaxSharedSecretLength];
  {
    EVP_PKEY* client = EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519");
    size_t length = sizeof(peer);
    EVP_PKEY_get_raw_public_key(client, peer, &length);
    EVP_PKEY_free(client);
  }
  t0 = ThreadCpuNanos();
  for (int i = 0; i < n; ++i) {
    if (!exchange->Exchange(tls13::kGroupX25519, peer, share, secret).ok) return false;
  }
  *x25519_micros = (ThreadCpuNanos() - t0) / 1000.0 / n / 2;
  return true;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}
double Best(const std::vector<double>& values) {
  return *std::min_element(values.begin(), values.end());
}

int Main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 500;
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 10;
  testing::TestPkiDir pki;
  TlsConfig config;
  config.engine = "openssl";  // OpenSSL's rows; the onepass row's context is made below
  config.cert_file = pki.chain_file();
  config.key_file = pki.key_file();
  auto context = TlsServerContext::Create(config, absl::Now());
  // OpenSSL's own order (and its clients'): AES-256-GCM first, a SHA-384 key schedule.
  config.ciphersuites =
      "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";
  auto aes256_context = TlsServerContext::Create(config, absl::Now());
  // The onepass engine (--tls-engine onepass): our TLS 1.3 handshake over libcrypto.
  config.ciphersuites = kDefaultTlsCipherSuites;
  config.engine = "onepass";
  auto onepass_context = TlsServerContext::Create(config, absl::Now());
  for (const auto* made : {&context, &aes256_context, &onepass_context}) {
    if (!made->ok()) {
      std::fprintf(stderr, "%s\n", std::string(made->status().message()).c_str());
      return 1;
    }
  }
  struct Row {
    std::string name;
    std::function<std::unique_ptr<BenchServer>()> make;
    bool counted = true;  // its allocations go through a counting allocator
  };
  std::vector<Row> rows = {
      {"onepass engine over libcrypto " OPENSSL_VERSION_STR ", TlsSession",
       [&] { return std::make_unique<OpenSslServer>(*onepass_context, true); }},
      {"OpenSSL " OPENSSL_VERSION_STR ", TlsSession (SSL_clear per slot)",
       [&] { return std::make_unique<OpenSslServer>(*context, true); }},
      {"OpenSSL " OPENSSL_VERSION_STR ", SSL_new per connection",
       [&] { return std::make_unique<OpenSslServer>(*context, false); }},
      {"OpenSSL " OPENSSL_VERSION_STR ", TlsSession, AES-256-GCM first",
       [&] { return std::make_unique<OpenSslServer>(*aes256_context, true); }},
  };
  rows.push_back({"GnuTLS " + tls_bench::GnutlsVersion() + ", minimal loop",
                  [&] { return tls_bench::MakeGnutlsServer(pki.chain_pem(), pki.key_pem()); },
                  false});
  rows.push_back({"wolfSSL " + tls_bench::WolfsslVersion() + ", minimal loop",
                  [&] { return tls_bench::MakeWolfsslServer(pki.chain_pem(), pki.key_pem()); }});
  // A third argument keeps only the rows whose name contains it (e.g. "onepass", for a profile).
  if (argc > 3) {
    const std::string only = argv[3];
    std::vector<Row> kept;
    for (Row& row : rows) {
      if (row.name.find(only) != std::string::npos) kept.push_back(std::move(row));
    }
    rows = std::move(kept);
  }
  // Rounds outer, servers inner: each round measures every server within a short time, so
  // a neighbour's build on a shared machine slows them alike. Median and best over rounds.
  std::vector<std::vector<double>> full(rows.size()), resumed(rows.size());
  std::vector<double> alloc_full(rows.size()), alloc_resumed(rows.size());
  std::vector<double> sign(rounds), x25519(rounds), wolf_sign(rounds), wolf_x25519(rounds);
  std::vector<double> engine_sign(rounds), engine_x25519(rounds);
  EVP_PKEY* key = pki.NewPrivateKey();  // the engine floor's signer
  bool ok = true;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < rows.size(); ++i) {
      std::unique_ptr<BenchServer> server = rows[i].make();
      if (server == nullptr) {
        std::fprintf(stderr, "%s: the server refused the test certificate or key\n",
                     rows[i].name.c_str());
        return 1;
      }
      const Figures f = Run(*server, n, false);
      const Figures r = Run(*server, n, true);
      ok = ok && f.completed == n && r.completed == n && r.resumed == n && f.resumed == 0;
      full[i].push_back(f.micros);
      resumed[i].push_back(r.micros);
      alloc_full[i] = f.allocs;
      alloc_resumed[i] = r.allocs;
    }
    Floor(n, &sign[round], &x25519[round]);
    ok = EngineFloor(n, key, &engine_sign[round], &engine_x25519[round]) && ok;
    ok = tls_bench::WolfsslFloor(n, &wolf_sign[round], &wolf_x25519[round]) && ok;
  }
  std::printf(
      "| server (%d rounds of %d handshakes) | full µs: median (best) | "
      "resumed µs: median (best) | allocations full / resumed |\n|---|---|---|---|\n",
      rounds, n);
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string allocs = rows[i].counted
                                   ? absl::StrFormat("%.0f / %.0f", alloc_full[i], alloc_resumed[i])
                                   : "not counted";
    std::printf("| %s | %.1f (%.1f) | %.1f (%.1f) | %s |\n", rows[i].name.c_str(), Median(full[i]),
                Best(full[i]), Median(resumed[i]), Best(resumed[i]), allocs.c_str());
  }
  const auto floor_row = [](const char* library, double s, double x) {
    std::printf(
        "| crypto floor, %s: 1 ECDSA P-256 sign (%.1f) + 2 X25519 (%.1f each) | %.1f | %.1f "
        "| |\n",
        library, s, x, s + 2 * x, 2 * x);
  };
  floor_row("OpenSSL EVP", Median(sign), Median(x25519));
  floor_row("OpenSSL EVP as the onepass engine calls it", Median(engine_sign),
            Median(engine_x25519));
  EVP_PKEY_free(key);
  floor_row("wolfCrypt", Median(wolf_sign), Median(wolf_x25519));
  if (!ok) std::fprintf(stderr, "some handshakes failed or did not resume\n");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace onepass::tls

uint64_t onepass::tls_bench::ThreadCpuNanos() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  // Before OpenSSL allocates anything: count its allocations (the server's, see ServerMeter).
  CRYPTO_set_mem_functions(onepass::tls::CountingMalloc, onepass::tls::CountingRealloc,
                           onepass::tls::CountingFree);
  return onepass::tls::Main(argc, argv);
}
