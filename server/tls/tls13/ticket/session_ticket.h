// Stateless session tickets of the TLS 1.3 engine (RFC 8446 §4.6.1, resumed with psk_dhe_ke,
// §4.2.9 and §4.2.11), sealed under the operator's --tls-ticket-keys (server/tls/ticket_keys.h):
// the same file and the same rotation as the OpenSSL engine (the newest key seals, every key
// listed opens, a ticket of a retired key gives a full handshake), in a format of our own.
//
// Why it is built this way (what a security review asks for):
// - AEAD, not encrypt-then-MAC by hand: AES-256-GCM from libcrypto, whose tag check is its own
//   and constant time. One primitive, one key, nothing of ours to get wrong in between.
// - A key DERIVED from each file key, never the file's bytes themselves:
//     K = HKDF-SHA256(salt = name, IKM = hmac_key | aes_key, info = kTicketKeyInfo, L = 32)
//   (RFC 5869). OpenSSL uses aes_key for AES-256-CBC and hmac_key for HMAC-SHA256; using
//   either under GCM too would put one key under two constructions, and a weakness of one
//   (or a bug in how we use one) would then reach the other. HKDF makes K independent of both.
//   The info string names the format version and the AEAD, so a future format gets keys of
//   its own.
// - Ticket = name (16) | iv (12) | AES-256-GCM(K, iv, aad = name, plaintext) | tag (16).
//   The name is the prefix (so Open finds its key without trying each) and the AAD (a ticket
//   moved under another name does not open). Names are the file's: an OpenSSL ticket under the
//   same file starts with the same 16 bytes and is told apart by its length and, failing that,
//   by the tag, which it cannot have.
// - A random 96-bit IV per ticket (RAND_bytes). Every host sharing the file seals under the
//   same K, so a counter cannot be kept unique across them. NIST SP 800-38D §8.3 bounds
//   random-IV GCM to 2^32 seals per key (a repeat IV leaks the XOR of two plaintexts and the
//   GHASH key, i.e. forgeries); after q seals the chance of a repeat is about q^2 / 2^97. A key
//   seals only while it is first in the file, so the bound is per rotation period: rotating
//   daily keeps the whole fleet within it up to 2^32 / 86400 ≈ 49,000 tickets a second. A fleet
//   issuing more must rotate more often (hourly: ≈ 1.2 million a second).
// - The plaintext has a fixed layout and size, so every ticket is kTicketLength bytes: the
//   length tells an observer nothing about the suite or the ALPN. It starts with a format
//   version byte, inside the AEAD so it cannot be changed; unused PSK and ALPN bytes must be
//   zero, so each state has one encoding.
// - Lifetime at most 7 days (RFC 8446 §4.6.1's 604800 s), checked on Seal and on Open; Open also
//   refuses a ticket issued more than kMaxIssueSkewMs in the future (another host's clock, not
//   an attacker's: the time is inside the AEAD).
// - Secrets wiped: the derived keys by the keyring's destructor, the HKDF input and every
//   plaintext buffer after use, and the cipher context (its key schedule) by the sealer's.
// - No allocation per Seal/Open: the cipher is fetched once by the keyring and the
//   EVP_CIPHER_CTX is made once per sealer and only re-keyed.
//
// Everything that is not a live ticket of ours under a key still listed is a plain "no" from
// Open (the handshake goes full, RFC 8446 §4.2.11: the server may ignore a PSK), never an error.
#ifndef ONEPASS_SERVER_TLS_TLS13_TICKET_SESSION_TICKET_H_
#define ONEPASS_SERVER_TLS_TLS13_TICKET_SESSION_TICKET_H_

#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/types/span.h"
#include "server/tls/ticket_keys.h"
#include "server/tls/tls13/crypto/cipher_suite.h"
#include "server/tls/tls13/crypto/record_protection.h"  // EvpCipherCtxDeleter

namespace onepass::tls::tls13 {

// What a ticket carries: enough to resume with psk_dhe_ke (RFC 8446 §4.6.1, §4.2.11).
struct TicketState {
  CipherSuite suite = CipherSuite::kAes128GcmSha256;
  // The resumption PSK (already derived from the resumption master secret and the nonce);
  // psk_length must be HashLength(suite), bytes past it zero.
  uint8_t psk[kMaxHashLength] = {};
  uint8_t psk_length = 0;
  uint64_t issued_unix_ms = 0;
  uint32_t lifetime_seconds = 0;  // ≤ kMaxTicketLifetimeSeconds
  uint32_t age_add = 0;
  // The ALPN protocol of the original connection (RFC 8446 §4.6.1: resumed sessions keep it);
  // alpn_length 0 when none was chosen, bytes past it zero.
  uint8_t alpn[32] = {};
  uint8_t alpn_length = 0;
};

// RFC 8446 §4.6.1: "Servers MUST NOT use any value greater than 604800 seconds (7 days)".
inline constexpr uint32_t kMaxTicketLifetimeSeconds = 604800;
// How far in the future a ticket's issue time may lie: the clocks of hosts sharing a key file
// (NTP keeps them within milliseconds; 10 s forgives a host that is badly off, and grants a
// ticket at most 10 s of life beyond its lifetime).
inline constexpr uint64_t kMaxIssueSkewMs = 10'000;

inline constexpr size_t kTicketNameLength = 16;  // TicketKey::name
inline constexpr size_t kTicketIvLength = 12;    // GCM's 96-bit IV (SP 800-38D §8.2.2)
inline constexpr size_t kTicketTagLength = 16;
// version 1 | suite 2 | issued_unix_ms 8 | lifetime_seconds 4 | age_add 4 |
// psk_length 1 | psk 48 | alpn_length 1 | alpn 32, integers big-endian.
inline constexpr size_t kTicketPlaintextLength = 1 + 2 + 8 + 4 + 4 + 1 + kMaxHashLength + 1 + 32;
// Every ticket is exactly this long (145 bytes).
inline constexpr size_t kTicketLength =
    kTicketNameLength + kTicketIvLength + kTicketPlaintextLength + kTicketTagLength;
// The sealed ticket's bound, what buffers for Seal are sized to (the interface's value, kept).
inline constexpr size_t kMaxTicketLength = 192;
static_assert(kTicketLength <= kMaxTicketLength);

// The format version inside the plaintext; Open refuses any other.
inline constexpr uint8_t kTicketFormatVersion = 1;

// The keys of one context, derived once from the TicketKeys (read-only afterwards, shared by
// every worker).
class TicketKeyring {
 public:
  // keys: newest first (the context's file or ProcessTicketKey()). Null when keys is empty,
  // holds more than kMaxTicketKeys or two keys of one name, or on a libcrypto failure.
  static std::unique_ptr<TicketKeyring> Create(absl::Span<const TicketKey> keys);
  ~TicketKeyring();  // wipes the derived keys
  TicketKeyring(const TicketKeyring&) = delete;
  TicketKeyring& operator=(const TicketKeyring&) = delete;

  size_t size() const { return count_; }

 private:
  friend class TicketSealer;
  struct Entry {
    uint8_t name[kTicketNameLength];
    uint8_t key[32];  // K above
  };

  TicketKeyring() = default;
  // The entry named by the first kTicketNameLength bytes of `name`, or null. Names are public
  // (they are the tickets' prefix), so a plain comparison is fine here.
  const Entry* Find(const uint8_t* name) const;
  const Entry& newest() const { return entries_[0]; }
  const EVP_CIPHER* cipher() const { return aes256gcm_.get(); }

  std::array<Entry, kMaxTicketKeys> entries_{};
  size_t count_ = 0;
  std::unique_ptr<EVP_CIPHER, EvpCipherDeleter> aes256gcm_;
};

// Seals and opens tickets; one per worker thread (holds the EVP_CIPHER_CTX), reused. The
// keyring must outlive it.
class TicketSealer {
 public:
  explicit TicketSealer(const TicketKeyring& keyring);
  ~TicketSealer();  // the context's key schedule is cleansed
  TicketSealer(const TicketSealer&) = delete;
  TicketSealer& operator=(const TicketSealer&) = delete;

  // Under the newest key; returns the ticket's length (kTicketLength) written to the front of
  // out (out.size() ≥ kTicketLength; kMaxTicketLength always is), 0 on a libcrypto failure or a
  // state that breaks its own rules (psk_length not the suite's hash length, alpn_length over
  // 32, lifetime over 7 days, unknown suite, out too small).
  size_t Seal(const TicketState& state, absl::Span<uint8_t> out);
  // The same with an IV the caller drew: kTicketIvLength bytes of RAND_bytes, for this ticket
  // only (the handshake draws it with its other public randoms, in one call). 0 when `iv` has
  // another length.
  size_t Seal(const TicketState& state, absl::Span<const uint8_t> iv, absl::Span<uint8_t> out);
  // False for anything that is not a live ticket of ours under a key still listed: unknown key
  // name, bad tag, wrong version byte, bad lengths, issued in the future beyond
  // kMaxIssueSkewMs, or older than its lifetime at now_unix_ms. *state is written only on true.
  bool Open(absl::Span<const uint8_t> ticket, uint64_t now_unix_ms, TicketState* state);

 private:
  const TicketKeyring& keyring_;
  std::unique_ptr<EVP_CIPHER_CTX, EvpCipherCtxDeleter> ctx_;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_TICKET_SESSION_TICKET_H_
