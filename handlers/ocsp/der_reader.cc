#include "handlers/ocsp/der_reader.h"

namespace onepass::ocsp {

bool ReadDerElement(absl::Span<const uint8_t>& input, DerElement& element) {
  if (input.size() < 2) return false;
  const uint8_t tag = input[0];
  // High tag number form (X.690 §8.1.2.4): never used by OCSP, rejected.
  if ((tag & 0x1F) == 0x1F) return false;
  size_t length = input[1];
  size_t header = 2;
  if (length & 0x80) {
    const size_t octets = length & 0x7F;
    // 0x80 is the indefinite form (BER only); more than 4 length octets is beyond any message
    // we accept (the whole body is limited far below 4 GiB).
    if (octets == 0 || octets > 4 || input.size() < 2 + octets) return false;
    // Minimal form (X.690 §10.1): no leading zero octet, and the long form only for >= 128.
    if (input[2] == 0) return false;
    length = 0;
    for (size_t i = 0; i < octets; ++i) length = (length << 8) | input[2 + i];
    if (length < 0x80) return false;
    header += octets;
  }
  if (length > input.size() - header) return false;
  element.tag = tag;
  element.content = input.subspan(header, length);
  input.remove_prefix(header + length);
  return true;
}

bool ReadDerElementWithTag(absl::Span<const uint8_t>& input, uint8_t tag,
                           absl::Span<const uint8_t>& content) {
  DerElement element;
  if (!ReadDerElement(input, element) || element.tag != tag) return false;
  content = element.content;
  return true;
}

bool IsMinimalDerInteger(absl::Span<const uint8_t> content) {
  if (content.empty()) return false;
  if (content.size() == 1) return true;
  // The first nine bits must not be all zeros or all ones.
  if (content[0] == 0x00 && (content[1] & 0x80) == 0) return false;
  if (content[0] == 0xFF && (content[1] & 0x80) != 0) return false;
  return true;
}

bool IsWellFormedDerOid(absl::Span<const uint8_t> content) {
  if (content.empty() || (content.back() & 0x80) != 0) return false;
  bool at_subidentifier_start = true;
  for (uint8_t octet : content) {
    // A subidentifier never starts with 0x80 (X.690 §8.19.2: "the leading octet ... shall not
    // have the value 0x80").
    if (at_subidentifier_start && octet == 0x80) return false;
    at_subidentifier_start = (octet & 0x80) == 0;
  }
  return true;
}

}  // namespace onepass::ocsp
