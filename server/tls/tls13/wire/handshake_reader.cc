#include "server/tls/tls13/wire/handshake_reader.h"

namespace onepass::tls::tls13 {

HandshakeReader::Result HandshakeReader::Feed(std::span<const uint8_t> fragment,
                                              std::vector<HandshakeMessage>& out) {
  buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(taken_));
  taken_ = 0;
  buffer_.insert(buffer_.end(), fragment.begin(), fragment.end());
  size_t pos = 0;
  while (buffer_.size() - pos >= 4) {
    const size_t length = (size_t{buffer_[pos + 1]} << 16) | (size_t{buffer_[pos + 2]} << 8) |
                          size_t{buffer_[pos + 3]};
    if (length > max_body_) {
      error_ = AlertDescription::kDecodeError;
      return Result::kError;
    }
    if (buffer_.size() - pos - 4 < length) break;
    out.push_back({buffer_[pos], std::span<const uint8_t>(buffer_.data() + pos + 4, length)});
    pos += 4 + length;
  }
  taken_ = pos;
  return Result::kOk;
}

}  // namespace onepass::tls::tls13
