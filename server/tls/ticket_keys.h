// Session ticket keys (--tls-ticket-keys FILE): what lets a client resume a TLS session on any
// worker and any host that shares the file, with no server-side session cache.
//
// The file is binary: one or more 80-byte keys back to back, the newest first. Each key is
//   name (16 bytes) | HMAC-SHA256 key (32 bytes) | AES-256-CBC key (32 bytes),
// the layout nginx's ssl_session_ticket_key uses for its 80-byte keys, so an operator makes
// one with `openssl rand 80` and rotates by putting a new key in front and dropping the last:
//   { openssl rand 80; head -c 160 ticket.keys; } > ticket.keys.new && mv ticket.keys.new
//   ticket.keys
// (three keys kept: new, current, previous) followed by a SIGHUP on every host. The first key
// encrypts new tickets; every key decrypts (the ticket names its key). A ticket whose key is
// no longer in the file is ignored: the client gets a full handshake, not an error.
//
// RFC 5077 §4 is the ticket structure OpenSSL builds from these keys (key_name | IV |
// encrypted state | MAC); RFC 8446 §4.6.1 carries it in TLS 1.3's NewSessionTicket.
#ifndef ONEPASS_SERVER_TLS_TICKET_KEYS_H_
#define ONEPASS_SERVER_TLS_TICKET_KEYS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass::tls {

struct TicketKey {
  static constexpr size_t kFileBytes = 80;
  std::array<uint8_t, 16> name{};
  std::array<uint8_t, 32> hmac_key{};
  std::array<uint8_t, 32> aes_key{};
};

// Most keys a file may hold: enough for any rotation scheme, few enough that a wrong file (a
// PEM, a log) is refused rather than read as hundreds of keys.
inline constexpr size_t kMaxTicketKeys = 16;

// The keys in `bytes` (the file's contents), newest first. An error says what is wrong and how
// to make a good file: empty, not a multiple of 80 bytes, too many keys, two keys with one name.
absl::StatusOr<std::vector<TicketKey>> ParseTicketKeys(absl::string_view bytes);

// ParseTicketKeys of the file at `path` (size-checked read); errors name the path.
absl::StatusOr<std::vector<TicketKey>> LoadTicketKeys(const std::string& path);

// A random key made once per process (the same for every context the process builds, so a
// SIGHUP reload keeps its clients' tickets valid); for when no file is given.
const TicketKey& ProcessTicketKey();

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TICKET_KEYS_H_
