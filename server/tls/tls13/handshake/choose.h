// The engine's first decision, from the ClientHello alone and before a byte is sent: serve the
// connection, ask for another key share (HelloRetryRequest), or hand the same bytes to the
// OpenSSL engine. Handing over is the answer to everything this engine does not implement or
// does not fully understand: OpenSSL then serves it or sends the alert it would have sent
// anyway, so a client sees no difference but the speed.
#ifndef ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_CHOOSE_H_
#define ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_CHOOSE_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "server/tls/tls13/handshake/fallback.h"
#include "server/tls/tls13/handshake/server_policy.h"
#include "server/tls/tls13/wire/alert.h"
#include "server/tls/tls13/wire/client_hello.h"

namespace onepass::tls::tls13 {

// The one signature scheme this engine signs with: ECDSA P-256 with SHA-256 (RFC 8446
// §4.2.3), the certificate DoT servers use for speed (server/tls/README.md).
inline constexpr uint16_t kEcdsaSecp256r1Sha256 = 0x0403;

struct Choice {
  enum class Action : uint8_t { kServe, kRetry, kFallback, kRefuse } action = Action::kFallback;
  Fallback fallback = Fallback::kNone;                           // kFallback: why
  AlertDescription alert = AlertDescription::kHandshakeFailure;  // kRefuse: what to send
  const char* reason = "";                                       // kRefuse: for the log
  uint16_t suite = 0;
  uint16_t group = 0;              // kServe: the key share's group; kRetry: the one to ask for
  size_t key_share_index = 0;      // kServe: which of hello.key_shares
  absl::Span<const uint8_t> alpn;  // kServe: the protocol selected (a view into the hello)
  bool offers_resumption = false;  // a pre_shared_key with psk_dhe_ke: try its first ticket
};

// The decision for a first ClientHello: serve, retry or fall back, never refuse (nothing has
// been sent, so whatever this engine would refuse, OpenSSL refuses with its own alert).
Choice ChooseForFirstHello(const ClientHello& hello, const ServerPolicy& policy);

// The decision for the ClientHello that answers our HelloRetryRequest for (`suite`, `group`):
// serve or refuse, for there is no falling back once we have spoken. §4.1.4: the suite must be
// the same, §4.2.8: the key share exactly one for the group we asked for.
Choice ChooseForSecondHello(const ClientHello& hello, const ServerPolicy& policy, uint16_t suite,
                            uint16_t group);

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_HANDSHAKE_CHOOSE_H_
