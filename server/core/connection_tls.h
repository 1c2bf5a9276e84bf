// The TLS layer of a connection accepted on a --tls-listen socket (DNS over TLS, RFC 7858):
// between the socket and the handler, so that the handler sees plaintext requests and writes
// plaintext responses exactly as on plain TCP (server/tls/tls_session.h does the TLS).
//
// Connection (server/core/connection.h) drives it in its own states: kReading receives
// ciphertext here and feeds it to the session, whose plaintext goes to the request buffer;
// kWriting encrypts the response a record at a time and sends the session's output. Owned by a
// connection slot and reused from one connection to the next: the SSL object and both buffers
// keep their memory.
#ifndef ONEPASS_SERVER_CORE_CONNECTION_TLS_H_
#define ONEPASS_SERVER_CORE_CONNECTION_TLS_H_

#include <cstddef>
#include <memory>
#include <utility>

#include "server/core/client_limits.h"
#include "server/core/handshake_limiter.h"
#include "server/core/input_buffer.h"
#include "server/core/worker_metrics.h"
#include "server/tls/handshake_gate.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_session.h"
#include "server/tls/tls_stats.h"

namespace onepass {

// Ciphertext one recv may bring: a whole TLS record (RFC 8446 §5.2: 2^14 bytes of plaintext
// plus at most 256 of expansion, and the 5-byte header) with room to spare, so that the
// ClientHello, or the client's Finished with its query, comes in one recv.
inline constexpr size_t kTlsReceiveBytes = 18 * 1024;
// Plaintext encrypted per record when sending (the TLS maximum): what waits unsent in the
// session beyond its handshake flight is bounded by one record, whatever the response size.
inline constexpr size_t kTlsRecordPlaintext = 16 * 1024;

// The worker's side of a ClientHello's admission beyond the rate (server/core/waiting_room.h):
// whether `client` may have one more handshake in progress, making room from the one that has
// waited longest when all are taken. Asked once per connection, at its ClientHello.
class HandshakeSpace {
 public:
  virtual ~HandshakeSpace() = default;
  virtual bool MakeRoomFor(const ClientKey& client) = 0;
};

// What a worker's connections on TLS listeners start with: the context in use (replaced on
// reload; a connection keeps the one it started with) and the worker's counters.
struct TlsStart {
  std::shared_ptr<const tls::TlsServerContext> context;
  tls::TlsStats* stats = nullptr;
  // The worker's per-prefix handshake budgets, and the bits of an address that make a prefix
  // (--client-prefix-v4/-v6); null: unlimited.
  HandshakeLimiter* limiter = nullptr;
  // The worker's handshakes in progress; null: no room limit (tests).
  HandshakeSpace* space = nullptr;
  int prefix_v4 = 32;
  int prefix_v6 = 64;
};

// The session's gate (server/tls/handshake_gate.h) is the connection's client prefix against
// the worker's limiter.
struct ConnectionTls final : public tls::HandshakeGate {
  ConnectionTls() : ciphertext(kTlsReceiveBytes) {}
  bool Admit(bool resumption) override {
    if (limiter != nullptr && !limiter->Admit(client, resumption, MonotonicNanos())) return false;
    // A second question for the same hello (its ticket was of an unknown key) asks the rate
    // only: the room was made for it already.
    if (space == nullptr || std::exchange(room_asked, true)) return true;
    return space->MakeRoomFor(client);
  }

  tls::TlsSession session;
  // Received, not yet fed: only what Feed left when the plaintext room filled.
  InputBuffer ciphertext;
  HandshakeLimiter* limiter = nullptr;
  HandshakeSpace* space = nullptr;
  bool room_asked = false;  // MakeRoomFor was asked for this connection
  ClientKey client{};       // the peer's prefix (the one a PROXY header named, if any)
  int prefix_v4 = 32;
  int prefix_v6 = 64;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_CONNECTION_TLS_H_
