// What the wire tests share: bytes as a vector (ByteVec, and Vec of a writer's span), RFC 8448's
// hex (Hex, from tests/unit/server/tls/tls13/crypto/hex.h) and the code points RFC 8448's traces
// use that the wire library does not name. Header-only.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_WIRE_WIRE_TEST_UTIL_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_WIRE_WIRE_TEST_UTIL_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "tests/unit/server/tls/tls13/crypto/hex.h"

namespace onepass::tls::tls13::testing {

using ByteVec = std::vector<uint8_t>;

inline ByteVec Vec(absl::Span<const uint8_t> span) { return ByteVec(span.begin(), span.end()); }

inline constexpr uint16_t kAes128GcmSha256 = 0x1301;   // RFC 8446 §B.4
inline constexpr uint16_t kRsaPssRsaeSha256 = 0x0804;  // §4.2.3: RFC 8448's server signs with it

}  // namespace onepass::tls::tls13::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_WIRE_WIRE_TEST_UTIL_H_
