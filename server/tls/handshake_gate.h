// The question a TLS session asks its owner before the costly half of a handshake (the key
// exchange and the certificate's signature): may this client have one now? The server answers
// with its per-client handshake budgets (server/transport/tls/handshake_limiter.h); the layer
// itself knows no clients. Asked from OpenSSL's callbacks, on the session's thread.
#ifndef ONEPASS_SERVER_TLS_HANDSHAKE_GATE_H_
#define ONEPASS_SERVER_TLS_HANDSHAKE_GATE_H_

#include "server/tls/tls_stats.h"

namespace onepass::tls {

class HandshakeGate {
 public:
  virtual ~HandshakeGate() = default;
  // A ClientHello arrived: `resumption` when it offers a session ticket (a pre_shared_key),
  // which costs a fraction of a full handshake. Asked again with false when the ticket turns
  // out to be of an unknown key, so that a made-up ticket cannot buy a full handshake at the
  // resumed price. False: the session fails (TlsFailure::k_limit).
  virtual bool Admit(bool resumption) = 0;
};

// What an SSL's app data points to (TlsSession sets it): the counters and the gate of the
// connection, for the context's callbacks (tls_server_context.cc).
struct SessionHooks {
  TlsStats* stats = nullptr;
  HandshakeGate* gate = nullptr;  // nullptr: every handshake is admitted
  bool refused = false;           // the gate said no: the failure's cause
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_HANDSHAKE_GATE_H_
