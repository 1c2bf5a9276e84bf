// The internet checksum (RFC 1071): a 16-bit one's complement sum, kept unfolded in 32 bits
// while bytes are added so that pieces (pseudo-header, header, payload) can be summed apart.
#ifndef ONEPASS_SERVER_XDP_TCP_CHECKSUM_H_
#define ONEPASS_SERVER_XDP_TCP_CHECKSUM_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace onepass::xdp {

// Adds `bytes` (big-endian 16-bit words; an odd last byte is padded with zero, RFC 1071 §4.1)
// to the running sum. Pieces after the first must start at an even offset of the whole.
uint32_t ChecksumAdd(uint32_t sum, std::span<const uint8_t> bytes);
// Adds one 16-bit word in host order.
inline uint32_t ChecksumAddWord(uint32_t sum, uint16_t word) { return sum + word; }
// Folds the carries and complements: the value written into a header.
uint16_t ChecksumFinish(uint32_t sum);
// Incremental update when one 16-bit word changes from `old_word` to `new_word` (RFC 1624 §3,
// eqn. 3): the header's checksum `check` (as stored, host order) after the change.
uint16_t ChecksumUpdate(uint16_t check, uint16_t old_word, uint16_t new_word);

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_TCP_CHECKSUM_H_
