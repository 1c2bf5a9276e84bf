// DNS wire-format constants and big-endian helpers shared by the DNS handler's pieces.
#ifndef ONEPASS_HANDLERS_DNS_DNS_WIRE_H_
#define ONEPASS_HANDLERS_DNS_DNS_WIRE_H_

#include <cstddef>
#include <cstdint>

namespace onepass::dns {

// RFC 1035 §4.1.1: the fixed header.
inline constexpr size_t kHeaderBytes = 12;
// RFC 1035 §2.3.4: a name is at most 255 octets in wire form.
inline constexpr size_t kMaxNameBytes = 255;
// RFC 1035 §4.2.2: a TCP message is preceded by a two-byte length, so at most 65535 bytes.
inline constexpr size_t kMaxMessageBytes = 65535;
inline constexpr size_t kLengthPrefixBytes = 2;

// Header flag bits (the 16-bit word after the ID), RFC 1035 §4.1.1, RFC 4035 §3.2.
inline constexpr uint16_t kFlagQr = 0x8000;
inline constexpr uint16_t kFlagAa = 0x0400;
inline constexpr uint16_t kFlagTc = 0x0200;
inline constexpr uint16_t kFlagRd = 0x0100;
inline constexpr uint16_t kFlagRa = 0x0080;
inline constexpr uint16_t kOpcodeMask = 0x7800;
inline constexpr int kOpcodeShift = 11;
inline constexpr uint16_t kRcodeMask = 0x000f;

enum Opcode : uint8_t { kOpcodeQuery = 0, kOpcodeNotify = 4 };

enum Rcode : uint16_t {
  kRcodeNoError = 0,
  kRcodeFormErr = 1,
  kRcodeServFail = 2,
  kRcodeNxDomain = 3,
  kRcodeNotImp = 4,
  kRcodeRefused = 5,
  kRcodeNotAuth = 9,
  kRcodeBadVers = 16,  // extended (RFC 6891 §9): upper 8 bits in the OPT TTL
};

enum RrType : uint16_t {
  kTypeA = 1,
  kTypeNs = 2,
  kTypeMd = 3,
  kTypeMf = 4,
  kTypeCname = 5,
  kTypeSoa = 6,
  kTypeMb = 7,
  kTypeMg = 8,
  kTypeMr = 9,
  kTypePtr = 12,
  kTypeMinfo = 14,
  kTypeMx = 15,
  kTypeTxt = 16,
  kTypeAaaa = 28,
  kTypeSrv = 33,
  kTypeDname = 39,
  kTypeOpt = 41,
  kTypeDs = 43,
  kTypeRrsig = 46,
  kTypeNsec = 47,
  kTypeDnskey = 48,
  kTypeNsec3 = 50,
  kTypeNsec3param = 51,
  kTypeTsig = 250,
  kTypeIxfr = 251,
  kTypeAxfr = 252,
  kTypeAny = 255,
};

enum RrClass : uint16_t { kClassIn = 1, kClassCh = 3, kClassAny = 255 };

// EDNS(0) option codes.
inline constexpr uint16_t kOptionTcpKeepalive = 11;  // RFC 7828
inline constexpr uint16_t kOptionPadding = 12;       // RFC 7830
inline constexpr uint16_t kOptionEde = 15;           // RFC 8914
// RFC 8467 §4.1: responses are padded to a multiple of this many bytes (Block-Length Padding,
// the recommended policy; 468 for responses, 128 for queries).
inline constexpr size_t kResponsePaddingBlock = 468;
inline constexpr size_t kOptionHeaderBytes = 4;  // OPTION-CODE, OPTION-LENGTH (RFC 6891 §6.1.2)
// RFC 8914 §4: INFO-CODEs we send.
inline constexpr uint16_t kEdeStaleAnswer = 3;
inline constexpr uint16_t kEdeNotSupported = 21;
inline constexpr uint16_t kEdeNoReachableAuthority = 22;
inline constexpr uint16_t kEdeNotAuthoritative = 20;
// RFC 6891 §6.1.4: the DO bit in the OPT TTL's flags word.
inline constexpr uint16_t kEdnsFlagDo = 0x8000;

inline uint16_t ReadU16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
inline uint32_t ReadU32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
inline void WriteU16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
inline void WriteU32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// The bytes of a Padding option (RFC 7830 §3, its header included) that take a message of
// `unpadded` bytes to the next multiple of kResponsePaddingBlock (RFC 8467 §4.1), or as far as
// `room` more bytes allow when that does not fit (less padding, never fewer records); 0, no
// option, when not even the option's header fits.
inline size_t PaddingOptionBytes(size_t unpadded, size_t room) {
  if (room < kOptionHeaderBytes) return 0;
  const size_t blocks =
      (unpadded + kOptionHeaderBytes + kResponsePaddingBlock - 1) / kResponsePaddingBlock;
  const size_t bytes = blocks * kResponsePaddingBlock - unpadded;
  return bytes < room ? bytes : room;
}

// ASCII lowercase of one octet; DNS names compare case-insensitively in ASCII only (RFC 4343).
inline uint8_t LowerAscii(uint8_t c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c + ('a' - 'A')) : c;
}

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_WIRE_H_
