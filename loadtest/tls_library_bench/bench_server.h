// One TLS server library under test in tls_library_bench: the two server turns of a one-query
// DNS-over-TLS connection, over memory (bytes in, bytes out; no socket).
#ifndef ONEPASS_LOADTEST_TLS_LIBRARY_BENCH_BENCH_SERVER_H_
#define ONEPASS_LOADTEST_TLS_LIBRARY_BENCH_BENCH_SERVER_H_

#include <cstdint>
#include <memory>
#include <string>

namespace onepass::tls_bench {

class BenchServer {
 public:
  virtual ~BenchServer() = default;
  // A new connection: its ClientHello in, the server's first flight out (empty on failure).
  virtual std::string Hello(const std::string& hello) = 0;
  // The client's Finished with the query in; the answer (the query echoed) with close_notify
  // and the session ticket out. Empty on failure. `resumed`: whether the ticket was taken.
  virtual std::string Answer(const std::string& flight, bool* resumed) = 0;
};

// Each library's server, from the same PEM chain (leaf first) and key; nullptr when the
// library refuses them. Every one is TLS 1.3 only, offers X25519 first, selects ALPN "dot",
// issues one session ticket per handshake and resumes from it, as onepassd does.
std::unique_ptr<BenchServer> MakeWolfsslServer(const std::string& chain_pem,
                                               const std::string& key_pem);
std::unique_ptr<BenchServer> MakeGnutlsServer(const std::string& chain_pem,
                                              const std::string& key_pem);
std::string WolfsslVersion();
std::string GnutlsVersion();

// wolfCrypt's own crypto floor, as tls_library_bench.cc measures OpenSSL's: [µs of thread
// CPU] per ECDSA P-256 signature and per X25519 operation (key generation or shared secret,
// averaged) over `n` of each. False if wolfCrypt refuses.
bool WolfsslFloor(int n, double* sign_micros, double* x25519_micros);

// The thread's CPU clock [ns] (CLOCK_THREAD_CPUTIME_ID), which every figure here uses.
uint64_t ThreadCpuNanos();

// Heap allocations made through wolfSSL's allocator since the process started (counted by
// wolfssl_server.cc; the benchmark reads the difference across the server's calls).
uint64_t WolfsslAllocations();

}  // namespace onepass::tls_bench

#endif  // ONEPASS_LOADTEST_TLS_LIBRARY_BENCH_BENCH_SERVER_H_
