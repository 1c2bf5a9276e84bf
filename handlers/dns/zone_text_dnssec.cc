#include "handlers/dns/zone_text_dnssec.h"

#include <algorithm>
#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

// After the C++ headers: ldns (1.8.3) defines `bool` for C, which breaks C++20 <optional>.
#include <ldns/ldns.h>  // NOLINT(build/include_order)

namespace onepass::dns {
namespace {

// Digits only, at most `max`.
bool Number(absl::string_view text, uint64_t max, uint64_t& value) {
  if (text.empty() || text.size() > 10) return false;
  value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value <= max;
}

void Append(std::string& out, uint64_t value, int bytes) {
  for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>(value >> shift));
  }
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// RFC 4034 §3.2: YYYYMMDDHHmmSS (UTC) to seconds since the epoch, modulo 2^32 (§3.1.5).
bool Time(absl::string_view text, uint32_t& seconds) {
  if (text.size() != 14) return false;
  uint64_t f[6];
  const int widths[6] = {4, 2, 2, 2, 2, 2};
  size_t at = 0;
  for (int i = 0; i < 6; ++i) {
    if (!Number(text.substr(at, widths[i]), 9999, f[i])) return false;
    at += widths[i];
  }
  if (f[0] < 1970 || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 ||
      f[5] > 59) {
    return false;
  }
  const int64_t days = DaysFromCivil(static_cast<int64_t>(f[0]), static_cast<int64_t>(f[1]),
                                     static_cast<int64_t>(f[2]));
  seconds =
      static_cast<uint32_t>(days * 86400 + static_cast<int64_t>(f[3] * 3600 + f[4] * 60 + f[5]));
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// RFC 4648 §4, padding only at the end of the whole text (the tokens joined).
bool AppendBase64(absl::Span<const absl::string_view> tokens, std::string& out) {
  uint32_t bits = 0;
  int count = 0;
  int padding = 0;
  size_t chars = 0;
  for (const absl::string_view token : tokens) {
    for (const char c : token) {
      int value;
      if (c == '=') {
        ++padding;
        ++chars;
        continue;
      }
      if (padding > 0) return false;
      if (c >= 'A' && c <= 'Z') {
        value = c - 'A';
      } else if (c >= 'a' && c <= 'z') {
        value = c - 'a' + 26;
      } else if (c >= '0' && c <= '9') {
        value = c - '0' + 52;
      } else if (c == '+') {
        value = 62;
      } else if (c == '/') {
        value = 63;
      } else {
        return false;
      }
      ++chars;
      bits = (bits << 6) | static_cast<uint32_t>(value);
      count += 6;
      if (count >= 8) {
        count -= 8;
        out.push_back(static_cast<char>((bits >> count) & 0xff));
      }
    }
  }
  // Whole quanta only, at most two '=' (RFC 4648 §4), and no stray bits set.
  return chars > 0 && chars % 4 == 0 && padding <= 2 && (bits & ((1u << count) - 1)) == 0;
}

// Hex digits in pairs to bytes; false on anything else or an odd count.
bool AppendHex(absl::string_view text, std::string& out) {
  if (text.size() % 2 != 0) return false;
  for (size_t i = 0; i < text.size(); i += 2) {
    const int high = HexValue(text[i]);
    const int low = HexValue(text[i + 1]);
    if (high < 0 || low < 0) return false;
    out.push_back(static_cast<char>(high << 4 | low));
  }
  return true;
}

int Base32HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'V') return c - 'A' + 10;
  if (c >= 'a' && c <= 'v') return c - 'a' + 10;
  return -1;
}

// RFC 4648 §7 in whole 8-character quanta (5 bytes each), no padding: the length of an
// NSEC3's next hashed owner (RFC 5155 §3.3) then never needs the bits of a partial quantum.
bool AppendBase32Hex(absl::string_view text, std::string& out) {
  if (text.empty() || text.size() % 8 != 0) return false;
  for (size_t at = 0; at < text.size(); at += 8) {
    uint64_t bits = 0;
    for (size_t i = at; i < at + 8; ++i) {
      const int value = Base32HexValue(text[i]);
      if (value < 0) return false;
      bits = bits << 5 | static_cast<uint64_t>(value);
    }
    Append(out, bits, 5);
  }
  return true;
}

// A type as written: a mnemonic (letters, digits, '-' as in NSAP-PTR) or RFC 3597's TYPE and
// digits only. ldns reads what follows "TYPE" with atoi, so that "TYPE12\" or "TYPE12x" would
// be type 12 here while its own tokenizer, which honours escapes, reads another token; those
// forms are left to ldns.
bool PlainTypeToken(absl::string_view token) {
  for (const char c : token) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-') return false;
  }
  if (token.size() > 4 && absl::StartsWithIgnoreCase(token, "TYPE")) {
    for (const char c : token.substr(4)) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    }
  }
  return true;
}

// RFC 4034 §4.1.2: per window of 256 types that has any, its number, the length of its
// bitmap up to the last byte with a bit set, and that bitmap (bit 0 of byte 0 is type 0).
bool AppendTypeBitmap(absl::Span<const absl::string_view> tokens, std::string& out) {
  absl::InlinedVector<uint16_t, 8> types;
  for (const absl::string_view token : tokens) {
    if (!PlainTypeToken(token)) return false;
    const std::string text(token);
    const uint16_t type = static_cast<uint16_t>(ldns_get_rr_type_by_name(text.c_str()));
    if (type == 0) return false;
    types.push_back(type);
  }
  if (types.empty()) return false;
  std::sort(types.begin(), types.end());
  size_t i = 0;
  while (i < types.size()) {
    const int window = types[i] >> 8;
    uint8_t bits[32] = {};
    int length = 0;
    for (; i < types.size() && types[i] >> 8 == window; ++i) {
      const int low = types[i] & 0xff;
      bits[low / 8] |= static_cast<uint8_t>(0x80 >> (low % 8));
      length = low / 8 + 1;
    }
    out.push_back(static_cast<char>(window));
    out.push_back(static_cast<char>(length));
    out.append(reinterpret_cast<const char*>(bits), static_cast<size_t>(length));
  }
  return true;
}

}  // namespace

bool DsRdataFromText(absl::Span<const absl::string_view> tokens, std::string& rdata) {
  uint64_t keytag, algorithm, digest_type;
  if (tokens.size() < 4 || !Number(tokens[0], 65535, keytag) ||
      !Number(tokens[1], 255, algorithm) || !Number(tokens[2], 255, digest_type)) {
    return false;
  }
  Append(rdata, keytag, 2);
  Append(rdata, algorithm, 1);
  Append(rdata, digest_type, 1);
  int high = -1;
  for (const absl::string_view token : tokens.subspan(3)) {
    for (const char c : token) {
      const int value = HexValue(c);
      if (value < 0) return false;
      if (high < 0) {
        high = value;
      } else {
        rdata.push_back(static_cast<char>(high << 4 | value));
        high = -1;
      }
    }
  }
  return high < 0;
}

bool RrsigRdataFromText(absl::Span<const absl::string_view> tokens, absl::string_view signer_wire,
                        std::string& rdata) {
  if (tokens.size() < 9 || !PlainTypeToken(tokens[0])) return false;
  const std::string type_text(tokens[0]);
  const uint16_t covered = static_cast<uint16_t>(ldns_get_rr_type_by_name(type_text.c_str()));
  uint64_t algorithm, labels, ttl, keytag;
  uint32_t expiration, inception;
  if (covered == 0 || !Number(tokens[1], 255, algorithm) || !Number(tokens[2], 255, labels) ||
      !Number(tokens[3], UINT32_MAX, ttl) || !Time(tokens[4], expiration) ||
      !Time(tokens[5], inception) || !Number(tokens[6], 65535, keytag)) {
    return false;
  }
  Append(rdata, covered, 2);
  Append(rdata, algorithm, 1);
  Append(rdata, labels, 1);
  Append(rdata, ttl, 4);
  Append(rdata, expiration, 4);
  Append(rdata, inception, 4);
  Append(rdata, keytag, 2);
  rdata.append(signer_wire.data(), signer_wire.size());
  return AppendBase64(tokens.subspan(8), rdata);
}

bool Nsec3RdataFromText(absl::Span<const absl::string_view> tokens, std::string& rdata) {
  uint64_t algorithm, flags, iterations;
  if (tokens.size() < 6 || !Number(tokens[0], 255, algorithm) || !Number(tokens[1], 255, flags) ||
      !Number(tokens[2], 65535, iterations)) {
    return false;
  }
  Append(rdata, algorithm, 1);
  Append(rdata, flags, 1);
  Append(rdata, iterations, 2);
  // Salt and next hashed owner, each after its length byte (RFC 5155 §3.2).
  const size_t salt_at = rdata.size();
  rdata.push_back('\0');
  if (tokens[3] != "-" && !AppendHex(tokens[3], rdata)) return false;
  if (rdata.size() - salt_at - 1 > 255) return false;
  rdata[salt_at] = static_cast<char>(rdata.size() - salt_at - 1);
  const size_t hash_at = rdata.size();
  rdata.push_back('\0');
  if (!AppendBase32Hex(tokens[4], rdata) || rdata.size() - hash_at - 1 > 255) return false;
  rdata[hash_at] = static_cast<char>(rdata.size() - hash_at - 1);
  return AppendTypeBitmap(tokens.subspan(5), rdata);
}

}  // namespace onepass::dns
