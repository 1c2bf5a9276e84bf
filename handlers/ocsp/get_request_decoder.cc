#include "handlers/ocsp/get_request_decoder.h"

namespace onepass::ocsp {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The 6-bit value of each byte as a base64 character (both alphabets), -1 for anything else
// ('=' included). A table: this runs once per character of every GET request.
struct Base64Table {
  constexpr Base64Table() : value() {
    for (int& v : value) v = -1;
    for (int i = 0; i < 26; ++i) {
      value['A' + i] = i;
      value['a' + i] = 26 + i;
    }
    for (int i = 0; i < 10; ++i) value['0' + i] = 52 + i;
    Set('+', 62);
    Set('-', 62);
    Set('/', 63);
    Set('_', 63);
  }
  // A char subscript is signed on x86 (clang's -Wchar-subscripts); these are all ASCII.
  constexpr void Set(char c, int v) { value[static_cast<unsigned char>(c)] = v; }
  int value[256];
};
constexpr Base64Table kBase64;

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
    const int value = kBase64.value[c];
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
