// The ClientHello as the TLS 1.3 engine reads it (RFC 8446 §4.1.2): every field and extension
// the engine decides on, as views into the message body, after the rules of §4.2 that can be
// checked from the message alone. What the engine then does with it (serve, fall back to
// OpenSSL, refuse) is a separate decision; this reader only says what the client sent, or the
// alert its malformed message earns.
//
// Views point into the body passed to ParseClientHello and live as long as it does.
#ifndef ONEPASS_SERVER_TLS_TLS13_WIRE_CLIENT_HELLO_H_
#define ONEPASS_SERVER_TLS_TLS13_WIRE_CLIENT_HELLO_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "server/tls/tls13/wire/alert.h"

namespace onepass::tls::tls13 {

// Extension code points the reader knows (RFC 8446 §4.2, RFC 7301, RFC 8449).
enum ExtensionType : uint16_t {
  kExtServerName = 0,
  kExtMaxFragmentLength = 1,
  kExtStatusRequest = 5,
  kExtEcPointFormats = 11,
  kExtUseSrtp = 14,
  kExtSupportedGroups = 10,
  kExtSignatureAlgorithms = 13,
  kExtAlpn = 16,
  kExtPadding = 21,
  kExtEncryptThenMac = 22,
  kExtExtendedMasterSecret = 23,
  kExtRecordSizeLimit = 28,
  kExtPreSharedKey = 41,
  kExtEarlyData = 42,
  kExtSupportedVersions = 43,
  kExtCookie = 44,
  kExtPskKeyExchangeModes = 45,
  kExtCertificateAuthorities = 47,
  kExtPostHandshakeAuth = 49,
  kExtSignatureAlgorithmsCert = 50,
  kExtKeyShare = 51,
  kExtRenegotiationInfo = 0xff01,
};

inline constexpr uint16_t kGroupSecp256r1 = 0x0017;
inline constexpr uint16_t kGroupX25519 = 0x001d;

// A list of 16-bit values on the wire (cipher suites, groups, versions, schemes), big-endian.
struct U16List {
  absl::Span<const uint8_t> bytes;  // 2 bytes per entry
  size_t size() const { return bytes.size() / 2; }
  uint16_t at(size_t i) const {
    return static_cast<uint16_t>(bytes[2 * i] << 8 | bytes[2 * i + 1]);
  }
  bool Contains(uint16_t value) const;
};

struct KeyShareEntry {
  uint16_t group = 0;
  absl::Span<const uint8_t> key_exchange;
};

struct PskIdentity {
  absl::Span<const uint8_t> identity;
  uint32_t obfuscated_ticket_age = 0;
};

struct ClientHello {
  static constexpr size_t kMaxKeyShares = 8;
  static constexpr size_t kMaxPskIdentities = 4;

  uint16_t legacy_version = 0;
  absl::Span<const uint8_t> random;             // 32 bytes
  absl::Span<const uint8_t> legacy_session_id;  // 0..32 bytes, echoed in the ServerHello
  U16List cipher_suites;

  // Each present_* says the extension was sent (even empty where that is allowed).
  bool has_supported_versions = false;
  U16List supported_versions;
  bool has_supported_groups = false;
  U16List supported_groups;
  bool has_signature_algorithms = false;
  U16List signature_algorithms;
  bool has_key_share = false;
  size_t key_share_count = 0;
  KeyShareEntry key_shares[kMaxKeyShares];
  bool has_psk_modes = false;
  bool psk_dhe_ke = false;  // psk_key_exchange_modes offers psk_dhe_ke (1), §4.2.9
  bool has_pre_shared_key = false;
  size_t psk_identity_count = 0;
  PskIdentity psk_identities[kMaxPskIdentities];
  absl::Span<const uint8_t> binders;  // the binders list, each a 1-byte length and the MAC
  // Where the binders list (its 2-byte length) starts in the body: the truncated ClientHello
  // of §4.2.11.2 is the message header and body[0, binders_offset).
  size_t binders_offset = 0;
  absl::Span<const uint8_t> server_name;  // the host_name, empty without
  bool has_alpn = false;
  absl::Span<const uint8_t> alpn_list;  // protocol_name_list (RFC 7301 §3.1), length-prefixed
  bool has_record_size_limit = false;
  uint16_t record_size_limit = 0;
  bool early_data = false;
  bool has_cookie = false;
  absl::Span<const uint8_t> cookie;
};

struct ClientHelloResult {
  bool ok = false;
  AlertDescription alert = AlertDescription::kDecodeError;
  const char* reason = "";  // for the log and the failure's count: what was wrong
};

// Reads `body` (the handshake message's body, without its 4-byte header) into `*hello`. Fails
// with decode_error on any length that does not add up, and with the alert §4.1.2/§4.2 name
// for the rest (see client_hello.cc for each rule and its section). More key shares or PSK
// identities than the fixed bounds above fail too (illegal_parameter): no real client sends
// that many, and the bound keeps the state preallocated.
ClientHelloResult ParseClientHello(absl::Span<const uint8_t> body, ClientHello* hello);

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_WIRE_CLIENT_HELLO_H_
