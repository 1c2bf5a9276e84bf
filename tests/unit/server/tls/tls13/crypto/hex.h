// Hex strings as RFC 8448 prints them ("33 ad 0a ..."), spaces and line breaks ignored.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_CRYPTO_HEX_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_CRYPTO_HEX_H_

#include <cstdint>
#include <string_view>
#include <vector>

namespace onepass::tls::tls13::testing {

inline std::vector<uint8_t> Hex(std::string_view s) {
  std::vector<uint8_t> out;
  int high = -1;
  for (char c : s) {
    int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (v < 0) continue;
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<uint8_t>(high << 4 | v));
      high = -1;
    }
  }
  return out;
}

}  // namespace onepass::tls::tls13::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS13_CRYPTO_HEX_H_
