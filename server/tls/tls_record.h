// What any TLS engine and the plain transport know of TLS records before any library sees
// them (RFC 8446 §5.1): the library-neutral side of the TLS layer.
#ifndef ONEPASS_SERVER_TLS_TLS_RECORD_H_
#define ONEPASS_SERVER_TLS_TLS_RECORD_H_

#include <cstdint>

#include "absl/types/span.h"

namespace onepass::tls {

inline constexpr uint8_t kHandshakeRecord = 22;    // ContentType handshake
inline constexpr uint8_t kClientHelloMessage = 1;  // HandshakeType client_hello

// Whether `bytes`, the first a client sent, begin a TLS ClientHello: a handshake record of TLS
// 1.x (RFC 8446 §5.1: type 22, legacy version 3.1 to 3.4) carrying handshake message type 1.
// For a plain listener, to tell a TLS client that came to the wrong port (kdig +tls to 53)
// from a request: as a DNS length prefix those bytes would announce a 5,635-byte query whose
// flags carry RCODE 1, and they are no text protocol's. Needs the first 6 bytes.
inline bool StartsWithClientHello(absl::Span<const uint8_t> bytes) {
  return bytes.size() >= 6 && bytes[0] == kHandshakeRecord && bytes[1] == 3 && bytes[2] >= 1 &&
         bytes[2] <= 4 && bytes[5] == kClientHelloMessage;
}

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_RECORD_H_
