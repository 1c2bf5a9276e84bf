// Fuzzes the transport state machine (server/core/connection.h) against arbitrary client behaviour
// AND arbitrary handler verdicts: whatever a peer sends and whatever a (buggy) handler answers,
// Connection::Advance must return (no spin), never read or write out of bounds, and keep its
// counters consistent. Input: a script of operations, each one byte plus arguments:
//   0: client sends the next (b % 32) bytes    1: client shuts down its sending side
//   2: client reads what the server sent       3: server runs Advance
// and every Handler::Process call takes its verdict from the script too. Scripts whose length
// is a multiple of 3 run with --proxy-protocol-from trusting the peer (a PROXY v2 header first).
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "server/core/connection.h"
#include "tests/fuzz/server/scripted_connection.h"

namespace {

using onepass::fuzzing::Script;
using onepass::fuzzing::ScriptedHandler;

// What the scripted handler's factory would declare: the most input a connection may buffer.
constexpr size_t kMaxRequestBytes = 40;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) != 0) return 0;
  Script script(data, size);
  ScriptedHandler handler(&script);
  onepass::WorkerStats stats;
  onepass::ConnectionEnv env;
  env.handler = &handler;
  env.stats = &stats;
  env.max_request_bytes = kMaxRequestBytes;
  // One script in three runs behind a trusted PROXY v2 balancer (server/core/proxy_protocol.h): the
  // socketpair's peer has no IP address, which ::/0 trusts, so the header step runs first.
  static const onepass::ProxyPolicy* const kTrustAll = [] {
    auto* policy = new onepass::ProxyPolicy();
    if (!policy->Add("::/0").ok()) abort();
    return policy;
  }();
  if (size % 3 == 0) env.proxy = kTrustAll;
  onepass::Connection connection(64, 256);
  connection.Reset(fds[0]);
  bool closed = false;
  while (!script.done() && !closed) {
    switch (script.Next() % 4) {
      case 0: {
        size_t n = script.Next() % 32;
        const uint8_t* bytes = script.Take(&n);
        if (n > 0) (void)send(fds[1], bytes, n, MSG_NOSIGNAL);
        break;
      }
      case 1:
        shutdown(fds[1], SHUT_WR);
        break;
      case 2: {
        uint8_t sink[4096];
        while (recv(fds[1], sink, sizeof(sink), 0) > 0) {
        }
        break;
      }
      case 3: {
        // Advance stops only in a state a connection waits in, or closed.
        const onepass::ConnectionState state = connection.Advance(env);
        if (state == onepass::ConnectionState::kProcessing ||
            state == onepass::ConnectionState::kWaitingUpstream) {
          abort();
        }
        closed = state == onepass::ConnectionState::kClosed;
        if (connection.in().size() > connection.in().capacity()) abort();
        break;
      }
    }
  }
  const onepass::StatsSnapshot counters = stats.Read();
  if (counters.responses < counters.served || counters.served > 1) abort();
  if (counters.rejected !=
      counters.rejected_oversize + counters.rejected_proxy + counters.rejected_tls_on_plain) {
    abort();
  }
  if (env.proxy == nullptr && (counters.rejected_proxy != 0 || counters.proxy_headers != 0)) {
    abort();
  }
  close(fds[0]);
  close(fds[1]);
  return 0;
}
