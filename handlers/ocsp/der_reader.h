// A strict, allocation-free reader of DER (ITU-T X.690 §10) type-length-value elements.
//
// Only what OCSP requests use: low tag numbers (one identifier octet), definite lengths in
// minimal form (X.690 §10.1), no indefinite lengths. Anything else is "not DER" and rejected, so
// that one byte string has one meaning (the same bytes OpenSSL would accept at load time).
#ifndef ONEPASS_HANDLERS_OCSP_DER_READER_H_
#define ONEPASS_HANDLERS_OCSP_DER_READER_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace onepass::ocsp {

// Identifier octets (X.690 §8.1.2) of the types the OCSP request reader meets.
inline constexpr uint8_t kDerInteger = 0x02;
inline constexpr uint8_t kDerOctetString = 0x04;
inline constexpr uint8_t kDerNull = 0x05;
inline constexpr uint8_t kDerObjectIdentifier = 0x06;
inline constexpr uint8_t kDerEnumerated = 0x0A;
inline constexpr uint8_t kDerSequence = 0x30;  // constructed
// Context-specific constructed [n]: EXPLICIT tags of RFC 6960's ASN.1 module.
constexpr uint8_t DerContextTag(int n) { return static_cast<uint8_t>(0xA0 | n); }

struct DerElement {
  uint8_t tag = 0;
  absl::Span<const uint8_t> content;  // a view into the input
};

// Reads one element from the front of `input` and advances `input` past it. Returns false (and
// leaves `input` unspecified) when the front is not one well-formed DER element that fits.
bool ReadDerElement(absl::Span<const uint8_t>& input, DerElement& element);

// ReadDerElement, and the element's tag must be `tag`.
bool ReadDerElementWithTag(absl::Span<const uint8_t>& input, uint8_t tag,
                           absl::Span<const uint8_t>& content);

// True if `content` is a non-empty INTEGER content in minimal two's complement (X.690 §8.3.2).
bool IsMinimalDerInteger(absl::Span<const uint8_t> content);

// True if `content` is a well-formed OBJECT IDENTIFIER content (X.690 §8.19): non-empty, each
// subidentifier in minimal base-128 form, the last octet ending a subidentifier.
bool IsWellFormedDerOid(absl::Span<const uint8_t> content);

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_DER_READER_H_
