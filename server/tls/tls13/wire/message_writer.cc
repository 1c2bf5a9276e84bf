#include "server/tls/tls13/wire/message_writer.h"

#include <cstring>

namespace onepass::tls::tls13 {

uint8_t* MessageWriter::Reserve(size_t n) {
  if (!ok_ || buffer_.size() - size_ < n) {
    ok_ = false;
    return nullptr;
  }
  uint8_t* out = buffer_.data() + size_;
  size_ += n;
  return out;
}

void MessageWriter::PutBigEndian(uint32_t v, size_t width) {
  uint8_t* out = Reserve(width);
  if (out == nullptr) return;
  for (size_t i = 0; i < width; ++i) {
    out[i] = static_cast<uint8_t>(v >> (8 * (width - 1 - i)));
  }
}

void MessageWriter::U8(uint8_t v) { PutBigEndian(v, 1); }
void MessageWriter::U16(uint16_t v) { PutBigEndian(v, 2); }
void MessageWriter::U32(uint32_t v) { PutBigEndian(v, 4); }

void MessageWriter::U24(uint32_t v) {
  if (v >= 1u << 24) {
    ok_ = false;
    return;
  }
  PutBigEndian(v, 3);
}

void MessageWriter::Bytes(absl::Span<const uint8_t> bytes) {
  uint8_t* out = Reserve(bytes.size());
  // memcpy from an empty span's data() (may be null) is undefined even for 0 bytes.
  if (out != nullptr && !bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
}

size_t MessageWriter::OpenVector(size_t width) {
  const size_t offset = size_;
  PutBigEndian(0, width);
  return offset;
}

void MessageWriter::CloseVector(size_t offset, size_t width) {
  if (!ok_) return;
  const size_t length = size_ - offset - width;
  if (width < 4 && length >= size_t{1} << (8 * width)) {
    ok_ = false;
    return;
  }
  for (size_t i = 0; i < width; ++i) {
    buffer_[offset + i] = static_cast<uint8_t>(length >> (8 * (width - 1 - i)));
  }
}

void MessageWriter::Vector8(absl::Span<const uint8_t> bytes) {
  const size_t at = OpenVector(1);
  Bytes(bytes);
  CloseVector(at, 1);
}

void MessageWriter::Vector16(absl::Span<const uint8_t> bytes) {
  const size_t at = OpenVector(2);
  Bytes(bytes);
  CloseVector(at, 2);
}

void MessageWriter::Vector24(absl::Span<const uint8_t> bytes) {
  const size_t at = OpenVector(3);
  Bytes(bytes);
  CloseVector(at, 3);
}

size_t MessageWriter::BeginMessage(uint8_t type) {
  const size_t start = size_;
  U8(type);
  OpenVector(3);
  return start;
}

absl::Span<const uint8_t> MessageWriter::EndMessage(size_t start) {
  CloseVector(start + 1, 3);
  if (!ok_) {
    // Only bytes of this message lie past `start`: earlier ones were whole when written.
    if (start < size_) size_ = start;
    return {};
  }
  return absl::Span<const uint8_t>(buffer_.data() + start, size_ - start);
}

}  // namespace onepass::tls::tls13
