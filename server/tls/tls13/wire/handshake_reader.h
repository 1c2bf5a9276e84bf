// Reassembles TLS 1.3 handshake messages (RFC 8446 §4: type u8, length u24, body) from the
// plaintext of handshake records, whatever the fragmentation (split-invariant). Messages are
// views into the reader's one buffer, so a handshake allocates nothing here once the buffer
// has its capacity (Reset keeps it).
#ifndef ONEPASS_SERVER_TLS_TLS13_WIRE_HANDSHAKE_READER_H_
#define ONEPASS_SERVER_TLS_TLS13_WIRE_HANDSHAKE_READER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "server/tls/tls13/wire/alert.h"

namespace onepass::tls::tls13 {

// Default bound on one message's body [bytes]: a ClientHello or a certificate chain fits.
inline constexpr size_t kDefaultMaxHandshakeMessage = 16 * 1024 + 2048;

struct HandshakeMessage {
  uint8_t type = 0;
  std::span<const uint8_t> body;  // into the reader: valid until its next Feed or Reset
};

// Not thread-safe; one per connection.
class HandshakeReader {
 public:
  explicit HandshakeReader(size_t max_body = kDefaultMaxHandshakeMessage) : max_body_(max_body) {}

  enum class Result { kOk, kError };

  // Appends one record's plaintext; complete messages go to `out` (views valid until the next
  // Feed: the messages of the previous one are forgotten first). kError (error() is
  // decode_error) when a message announces a body over the bound: RFC 8446 names no
  // dedicated alert for it.
  Result Feed(std::span<const uint8_t> fragment, std::vector<HandshakeMessage>& out);

  // RFC 8446 §5.1: handshake messages must not span a key change. Call before changing keys;
  // false (a partial message is buffered) means the peer must get unexpected_message.
  bool AtMessageBoundary() const { return taken_ == buffer_.size(); }

  AlertDescription error() const { return error_; }

  // For the next connection of the slot: forgets everything, keeps the buffer's capacity.
  void Reset() {
    buffer_.clear();
    taken_ = 0;
    error_ = AlertDescription::kCloseNotify;
  }

 private:
  size_t max_body_;
  std::vector<uint8_t> buffer_;
  size_t taken_ = 0;  // buffer_'s bytes given out as messages by the last Feed
  AlertDescription error_ = AlertDescription::kCloseNotify;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_WIRE_HANDSHAKE_READER_H_
