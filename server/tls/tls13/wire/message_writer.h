// MessageWriter: TLS handshake messages appended into a caller-owned buffer of fixed capacity
// (RFC 8446 §3 presentation language: big-endian integers, length-prefixed vectors). It never
// allocates, so a connection's output buffer can be sized once and reused.
//
// Failure is sticky: once an append does not fit (or a vector outgrows its length prefix),
// ok() is false and every later append is refused until Clear(). A caller can therefore
// write a whole flight and check once.
#ifndef ONEPASS_SERVER_TLS_TLS13_WIRE_MESSAGE_WRITER_H_
#define ONEPASS_SERVER_TLS_TLS13_WIRE_MESSAGE_WRITER_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace onepass::tls::tls13 {

// Not thread-safe; the buffer must outlive the writer and every span it returns.
class MessageWriter {
 public:
  explicit MessageWriter(absl::Span<uint8_t> buffer) : buffer_(buffer) {}

  bool ok() const { return ok_; }
  size_t size() const { return size_; }
  size_t capacity() const { return buffer_.size(); }
  absl::Span<const uint8_t> written() const { return {buffer_.data(), size_}; }
  // Size 0, ok again.
  void Clear() {
    size_ = 0;
    ok_ = true;
  }
  // Makes the writer not ok, as an overflow would: for a caller's argument that no message
  // may carry, so the flight fails as a whole instead of going out malformed.
  void Fail() { ok_ = false; }

  void U8(uint8_t v);
  void U16(uint16_t v);
  void U24(uint32_t v);  // v < 2^24, else the writer fails
  void U32(uint32_t v);
  void Bytes(absl::Span<const uint8_t> bytes);

  // A vector with a `width`-byte length prefix (RFC 8446 §3.4; width 1, 2 or 3).
  // OpenVector writes the placeholder and returns its offset; CloseVector patches it with
  // the number of bytes appended since, failing the writer when that does not fit `width`.
  size_t OpenVector(size_t width);
  void CloseVector(size_t offset, size_t width);
  // Shorthands: a whole vector of `bytes` with a 1-, 2- or 3-byte length.
  void Vector8(absl::Span<const uint8_t> bytes);
  void Vector16(absl::Span<const uint8_t> bytes);
  void Vector24(absl::Span<const uint8_t> bytes);

  // One handshake message (§4: msg_type, uint24 length, body). BeginMessage writes the
  // header and returns where it starts; EndMessage patches the length and returns the whole
  // message, or, when anything in it failed, drops its partial bytes (size() goes back to
  // `start`, so written() holds whole messages only) and returns an empty span.
  size_t BeginMessage(uint8_t type);
  absl::Span<const uint8_t> EndMessage(size_t start);

 private:
  // Room for `n` more bytes, or nullptr (and the writer failed).
  uint8_t* Reserve(size_t n);
  void PutBigEndian(uint32_t v, size_t width);

  absl::Span<uint8_t> buffer_;
  size_t size_ = 0;
  bool ok_ = true;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_WIRE_MESSAGE_WRITER_H_
