#include "handlers/ocsp/get_request_decoder.h"

namespace onepass::ocsp {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The 6-bit value of a base64 character, -1 for anything else ('=' included).
int Base64Value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

}  // namespace

absl::optional<size_t> DecodeGetRequestPath(absl::string_view encoded, absl::Span<uint8_t> out) {
  uint32_t bits = 0;   // pending bits, most significant first
  int bit_count = 0;   // how many of `bits` are pending (0..7 between characters)
  size_t symbols = 0;  // base64 characters seen (not counting padding)
  size_t padding = 0;  // '=' seen
  size_t written = 0;
  for (size_t i = 0; i < encoded.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(encoded[i]);
    if (c == '%') {
      if (i + 2 >= encoded.size()) return absl::nullopt;
      const int high = HexValue(encoded[i + 1]);
      const int low = HexValue(encoded[i + 2]);
      if (high < 0 || low < 0) return absl::nullopt;
      c = static_cast<unsigned char>(high * 16 + low);
      i += 2;
    }
    if (c == '=') {
      ++padding;
      continue;
    }
    // Nothing but padding after padding.
    if (padding != 0) return absl::nullopt;
    const int value = Base64Value(c);
    if (value < 0) return absl::nullopt;
    ++symbols;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    bit_count += 6;
    if (bit_count >= 8) {
      bit_count -= 8;
      if (written == out.size()) return absl::nullopt;
      out[written++] = static_cast<uint8_t>(bits >> bit_count);
      bits &= (1u << bit_count) - 1;
    }
  }
  // A lone trailing symbol carries 6 bits: not a whole byte. Padding, when present, must
  // complete the last quantum (RFC 4648 §4: "==" after 2 symbols, "=" after 3).
  const size_t remainder = symbols % 4;
  if (remainder == 1) return absl::nullopt;
  if (padding != 0 && (remainder == 0 || padding != 4 - remainder)) return absl::nullopt;
  // The unused low bits of the last symbol must be zero (RFC 4648 §3.5: canonical encoding).
  if (bits != 0) return absl::nullopt;
  return written;
}

}  // namespace onepass::ocsp
