// The client's handshake messages after its ClientHello, as the server reads them: Finished
// (RFC 8446 §4.4.4) and KeyUpdate (§4.6.3). Each takes the message body (without its 4-byte
// header, as HandshakeReader yields it); checking the Finished MAC is the state machine's.
#ifndef ONEPASS_SERVER_TLS_TLS13_WIRE_CLIENT_MESSAGES_H_
#define ONEPASS_SERVER_TLS_TLS13_WIRE_CLIENT_MESSAGES_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "server/tls/tls13/wire/alert.h"

namespace onepass::tls::tls13 {

// The client's Finished body: exactly hash_length bytes of verify_data (else decode_error,
// §4.4.4: verify_data is Hash.length bytes). On success `*verify_data` views `body`.
bool ParseFinished(absl::Span<const uint8_t> body, size_t hash_length,
                   absl::Span<const uint8_t>* verify_data);

// KeyUpdate (§4.6.3): one byte, 0 or 1; a wrong length is decode_error, another value
// illegal_parameter ("MUST abort ... with an illegal_parameter alert").
struct KeyUpdateResult {
  bool ok = false;
  bool update_requested = false;
  AlertDescription alert = AlertDescription::kDecodeError;
};
KeyUpdateResult ParseKeyUpdate(absl::Span<const uint8_t> body);

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_WIRE_CLIENT_MESSAGES_H_
