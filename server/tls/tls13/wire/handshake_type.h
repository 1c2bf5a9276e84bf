// TLS 1.3 handshake message types (RFC 8446 §4, HandshakeType): the first byte of every
// handshake message, and of the synthetic message_hash that replaces ClientHello1 in the
// transcript after a HelloRetryRequest (§4.4.1).
#ifndef ONEPASS_SERVER_TLS_TLS13_WIRE_HANDSHAKE_TYPE_H_
#define ONEPASS_SERVER_TLS_TLS13_WIRE_HANDSHAKE_TYPE_H_

#include <cstdint>

namespace onepass::tls::tls13 {

// Unscoped so a value compares directly with HandshakeMessage::type (a uint8_t).
enum HandshakeType : uint8_t {
  kClientHello = 1,
  kServerHello = 2,  // a HelloRetryRequest too: it is a ServerHello with a special random
  kNewSessionTicket = 4,
  kEndOfEarlyData = 5,
  kEncryptedExtensions = 8,
  kCertificate = 11,
  kCertificateRequest = 13,
  kCertificateVerify = 15,
  kFinished = 20,
  kKeyUpdate = 24,
  kMessageHash = 254,
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_WIRE_HANDSHAKE_TYPE_H_
