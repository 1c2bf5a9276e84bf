#include "server/xdp/tcp/checksum.h"

namespace onepass::xdp {

uint32_t ChecksumAdd(uint32_t sum, std::span<const uint8_t> bytes) {
  uint64_t acc = sum;
  size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2) acc += (uint32_t{bytes[i]} << 8) | bytes[i + 1];
  if (i < bytes.size()) acc += uint32_t{bytes[i]} << 8;
  while (acc >> 32) acc = (acc & 0xffffffffu) + (acc >> 32);
  return static_cast<uint32_t>(acc);
}

uint16_t ChecksumFinish(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffffu) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffffu);
}

uint16_t ChecksumUpdate(uint16_t check, uint16_t old_word, uint16_t new_word) {
  // HC' = ~(~HC + ~m + m')
  uint32_t sum =
      uint32_t{static_cast<uint16_t>(~check)} + static_cast<uint16_t>(~old_word) + new_word;
  return ChecksumFinish(sum);
}

}  // namespace onepass::xdp
