// The server's handshake messages (RFC 8446 §4), written into a MessageWriter: ServerHello
// and HelloRetryRequest in the clear, then EncryptedExtensions, Certificate,
// CertificateVerify and Finished under the handshake keys, NewSessionTicket and KeyUpdate
// after. Bytes only: the state machine supplies the keys, signatures and MACs.
//
// Each Write* appends one whole handshake message (4-byte header and body) and returns the
// span of that one message inside the writer's buffer, so the caller can add it to the
// transcript; the span stays valid until the writer is cleared or its buffer reused. It
// returns an empty span, and leaves the writer not ok, when the message did not fit or an
// argument is one that no well-formed message can carry (each function says which).
#ifndef ONEPASS_SERVER_TLS_TLS13_WIRE_SERVER_MESSAGES_H_
#define ONEPASS_SERVER_TLS_TLS13_WIRE_SERVER_MESSAGES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "server/tls/tls13/wire/message_writer.h"

namespace onepass::tls::tls13 {

// §4.1.3: the random of a HelloRetryRequest, SHA-256("HelloRetryRequest").
inline constexpr uint8_t kHelloRetryRequestRandom[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c};

// Every member of these field structs has a default, so a designated initializer may leave
// any out without -Wmissing-field-initializers.
struct ServerHelloFields {
  absl::Span<const uint8_t> random = {};             // 32 bytes
  absl::Span<const uint8_t> legacy_session_id = {};  // echoed from the ClientHello, 0..32 bytes
  uint16_t cipher_suite = 0;
  uint16_t key_share_group = 0;
  absl::Span<const uint8_t> key_share = {};  // the server's public key
  bool has_psk = false;                      // pre_shared_key with selected_identity
  uint16_t psk_identity = 0;
};

// §4.1.3: legacy_version 0x0303, the fields above, null compression, and the extensions
// pre_shared_key (when has_psk), key_share, supported_versions (0x0304), in the order
// RFC 8448 §3 and §4 print them. Fails on a random not of 32 bytes, a session id over 32
// bytes, or an empty key share (§4.2.8: psk_ke alone is not offered).
absl::Span<const uint8_t> WriteServerHello(const ServerHelloFields& fields, MessageWriter* out);

// §4.1.4: a ServerHello with the random above, key_share holding only selected_group
// (§4.2.8), cookie (§4.2.2) when `cookie` is not empty, and supported_versions, in RFC 8448
// §5's order. Fails on a session id over 32 bytes.
absl::Span<const uint8_t> WriteHelloRetryRequest(absl::Span<const uint8_t> legacy_session_id,
                                                 uint16_t cipher_suite, uint16_t selected_group,
                                                 absl::Span<const uint8_t> cookie,
                                                 MessageWriter* out);

struct EncryptedExtensionsFields {
  // The selected protocol name (no length); empty: no ALPN extension.
  absl::Span<const uint8_t> alpn_protocol = {};
  bool server_name_acknowledged = false;  // an empty server_name extension (RFC 6066 §3)
  uint16_t record_size_limit = 0;         // RFC 8449; 0: not sent
  // RFC 8446 §4.2.7: the server's groups in preference order, for the client's next
  // connection; empty: not sent.
  absl::Span<const uint16_t> supported_groups = {};
};

// §4.3.1. Extensions in the order supported_groups, record_size_limit, server_name, ALPN
// (RFC 8448 §3's order for the first three). Fails on a protocol name over 255 bytes or a
// record_size_limit outside [64, 2^14 + 1] (RFC 8449 §4).
absl::Span<const uint8_t> WriteEncryptedExtensions(const EncryptedExtensionsFields& fields,
                                                   MessageWriter* out);

// The Certificate message (§4.4.2) built once per context: empty certificate_request_context,
// each DER certificate (leaf first) with empty extensions. Empty when the chain is empty, a
// certificate is empty, or the message would exceed 2^24 - 1 bytes of body.
std::vector<uint8_t> EncodeCertificateMessage(absl::Span<const std::vector<uint8_t>> der_chain);

// §4.4.3: 64 bytes of 0x20, "TLS 1.3, server CertificateVerify", 0x00, transcript_hash: the
// content the server signs. Returns the length written into out (out must hold
// 64 + 33 + 1 + hash length, at most 146 bytes for SHA-384), 0 when out is too small.
inline constexpr size_t kMaxCertificateVerifyContent = 146;
size_t ServerCertificateVerifyContent(absl::Span<const uint8_t> transcript_hash,
                                      absl::Span<uint8_t> out);

// §4.4.3: algorithm, signature<0..2^16-1>.
absl::Span<const uint8_t> WriteCertificateVerify(uint16_t signature_scheme,
                                                 absl::Span<const uint8_t> signature,
                                                 MessageWriter* out);

// §4.4.4: verify_data alone, its length the hash's. Fails on empty verify_data.
absl::Span<const uint8_t> WriteFinished(absl::Span<const uint8_t> verify_data, MessageWriter* out);

// §4.6.1, no extensions (no early data is offered). Fails on a lifetime over 604800 s
// (7 days, §4.6.1's MUST NOT), a nonce over 255 bytes, or an empty ticket.
inline constexpr uint32_t kMaxNewSessionTicketLifetime = 604800;
absl::Span<const uint8_t> WriteNewSessionTicket(uint32_t lifetime_seconds, uint32_t age_add,
                                                absl::Span<const uint8_t> nonce,
                                                absl::Span<const uint8_t> ticket,
                                                MessageWriter* out);

// §4.6.3: request_update, update_requested (1) or update_not_requested (0).
absl::Span<const uint8_t> WriteKeyUpdate(bool update_requested, MessageWriter* out);

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_WIRE_SERVER_MESSAGES_H_
