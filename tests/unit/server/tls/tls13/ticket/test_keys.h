// Ticket keys and states for the tests of server/tls/tls13/ticket/: file keys made from one
// byte each (as `openssl rand 80` would make them, but readable in a failure message), and a
// state of each suite.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_TICKET_TEST_KEYS_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_TICKET_TEST_KEYS_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "server/tls/ticket_keys.h"
#include "server/tls/tls13/ticket/session_ticket.h"

namespace onepass::tls::tls13::testing {

// 2026-12-03 06:00 UTC [ms]: what the tests call now.
inline constexpr uint64_t kNowMs = 1796277600000;

// The 80 bytes of a key file entry: name = 16 × seed, hmac_key = 32 × (seed+1), aes_key =
// 32 × (seed+2).
inline std::string KeyFileBytes(uint8_t seed) {
  return std::string(16, static_cast<char>(seed)) + std::string(32, static_cast<char>(seed + 1)) +
         std::string(32, static_cast<char>(seed + 2));
}

inline TicketKey MakeKey(uint8_t seed) {
  const std::string bytes = KeyFileBytes(seed);
  TicketKey key;
  std::memcpy(key.name.data(), bytes.data(), 16);
  std::memcpy(key.hmac_key.data(), bytes.data() + 16, 32);
  std::memcpy(key.aes_key.data(), bytes.data() + 48, 32);
  return key;
}

inline TicketState MakeState(CipherSuite suite, const std::string& alpn,
                             uint64_t issued_unix_ms = kNowMs, uint32_t lifetime_seconds = 7200) {
  TicketState s;
  s.suite = suite;
  s.psk_length = static_cast<uint8_t>(HashLength(suite));
  for (size_t i = 0; i < s.psk_length; ++i) s.psk[i] = static_cast<uint8_t>(0xa0 + i);
  s.issued_unix_ms = issued_unix_ms;
  s.lifetime_seconds = lifetime_seconds;
  s.age_add = 0x8badf00d;
  s.alpn_length = static_cast<uint8_t>(alpn.size());
  std::memcpy(s.alpn, alpn.data(), alpn.size());
  return s;
}

inline bool SameState(const TicketState& a, const TicketState& b) {
  return a.suite == b.suite && a.psk_length == b.psk_length &&
         std::memcmp(a.psk, b.psk, sizeof(a.psk)) == 0 && a.issued_unix_ms == b.issued_unix_ms &&
         a.lifetime_seconds == b.lifetime_seconds && a.age_add == b.age_add &&
         a.alpn_length == b.alpn_length && std::memcmp(a.alpn, b.alpn, sizeof(a.alpn)) == 0;
}

}  // namespace onepass::tls::tls13::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_TICKET_TEST_KEYS_H_
