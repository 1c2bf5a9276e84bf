// Fuzzes a TLS connection through the transport (server/core/connection.h with its
// TlsTransport) the way the server runs it: a real TLS client (OpenSSL's, over memory)
// whose bytes reach the socket in pieces the fuzzer chooses, mixed with bytes of the fuzzer's
// own (a corrupted record, garbage instead of a ClientHello), a peer that shuts down at any
// moment, and a handler whose every verdict the fuzzer picks. Whatever happens, Advance returns
// (no spin) in a state a connection waits in, the buffers stay within their capacity, the
// counters agree, and a failed session is counted once by cause. Input: a script of operations,
// each one byte plus arguments:
//   0: the client's pending output, its next (b % 64 + 1) bytes, to the socket
//   1: the next (b % 32) script bytes to the socket as they are
//   2: the client reads what the server sent and steps its handshake; once it is done it
//      writes a request of (b % 40) bytes
//   3: the server runs Advance       4: the client shuts down its sending side
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "server/core/connection.h"
#include "server/tls/tls_server_context.h"
#include "server/transport/tls/tls_transport_factory.h"
#include "tests/fuzz/server/scripted_connection.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace {

using onepass::fuzzing::Script;
using onepass::fuzzing::ScriptedHandler;

constexpr size_t kMaxRequestBytes = 40;

// One certificate and context for the whole run: made once, like a server's at start.
const std::shared_ptr<const onepass::tls::TlsServerContext>& Context() {
  static const auto* const pki = new onepass::tls::testing::TestPkiDir();
  static const auto* const context = [] {
    onepass::tls::TlsConfig config;
    config.cert_file = pki->chain_file();
    config.key_file = pki->key_file();
    auto made = onepass::tls::TlsServerContext::Create(config, absl::Now());
    if (!made.ok()) abort();
    return new std::shared_ptr<const onepass::tls::TlsServerContext>(*made);
  }();
  return *context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) != 0) return 0;
  Script script(data, size);
  ScriptedHandler handler(&script);
  onepass::WorkerStats stats;
  onepass::TlsTransportFactory transports(Context(), /*limits=*/nullptr);
  onepass::ConnectionEnv env;
  env.handler = &handler;
  env.stats = &stats;
  env.max_request_bytes = kMaxRequestBytes;
  onepass::Connection connection(64, 256);
  connection.Reset(fds[0]);
  if (!connection.StartTransport(transports, /*owner=*/nullptr)) abort();
  onepass::tls::testing::TestTlsClient client;
  std::string client_output;
  bool handshake_done = false;
  bool closed = false;
  while (!script.done() && !closed) {
    switch (script.Next() % 5) {
      case 0: {
        client_output += client.TakeOutput();
        const size_t n = std::min<size_t>(script.Next() % 64 + 1, client_output.size());
        if (n > 0) (void)send(fds[1], client_output.data(), n, MSG_NOSIGNAL);
        client_output.erase(0, n);
        break;
      }
      case 1: {
        size_t n = script.Next() % 32;
        const uint8_t* bytes = script.Take(&n);
        if (n > 0) (void)send(fds[1], bytes, n, MSG_NOSIGNAL);
        break;
      }
      case 2: {
        char sink[4096];
        ssize_t got;
        while ((got = recv(fds[1], sink, sizeof(sink), 0)) > 0) {
          client.GiveInput({sink, static_cast<size_t>(got)});
        }
        if (!handshake_done && client.Step()) {
          handshake_done = true;
          size_t n = script.Next() % 40;
          const uint8_t* request = script.Take(&n);
          client.Write({reinterpret_cast<const char*>(request), n});
        }
        if (handshake_done) (void)client.Read();
        break;
      }
      case 3: {
        const onepass::ConnectionState state = connection.Advance(env);
        if (state == onepass::ConnectionState::kProcessing ||
            state == onepass::ConnectionState::kWaitingUpstream) {
          abort();
        }
        closed = state == onepass::ConnectionState::kClosed;
        if (connection.in().size() > connection.in().capacity()) abort();
        break;
      }
      case 4:
        shutdown(fds[1], SHUT_WR);
        break;
    }
  }
  const onepass::StatsSnapshot counters = stats.Read();
  if (counters.responses < counters.served || counters.served > 1) abort();
  const onepass::tls::TlsStatsSnapshot tls = transports.stats().Read();
  // A session fails at most once, and completes its handshake at most once.
  if (tls.failed_total() > 1 || tls.handshakes_full + tls.handshakes_resumed > 1) abort();
  // No response is sent through a handshake that never completed.
  if (counters.responses > 0 && tls.handshakes_full + tls.handshakes_resumed == 0) abort();
  close(fds[0]);
  close(fds[1]);
  return 0;
}
