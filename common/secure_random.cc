#include "common/secure_random.h"

#include <openssl/err.h>
#include <openssl/rand.h>

#include <cstdlib>

#include "common/log.h"

namespace onepass {

void SecureRandom::Refill() {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(block_.data()),
                 static_cast<int>(sizeof(block_))) != 1) {
    // No safe fallback: predictable IDs are the vulnerability this class exists to close.
    LogError("OpenSSL's random generator failed (%s); stopping rather than send guessable IDs",
             ERR_error_string(ERR_get_error(), nullptr));
    std::abort();
  }
  used_ = 0;
}

SecureRandom& SecureRandom::operator=(SecureRandom&& other) noexcept {
  block_ = other.block_;
  used_ = other.used_;
  other.block_.fill(0);
  other.used_ = other.block_.size();
  return *this;
}

uint32_t SecureRandom::Next32() {
  if (used_ == block_.size()) Refill();
  return block_[used_++];
}

uint32_t SecureRandom::Below(uint32_t bound) {
  // Values at or above the largest multiple of `bound` would favour the low residues.
  const uint32_t limit = UINT32_MAX - UINT32_MAX % bound;
  uint32_t value;
  do {
    value = Next32();
  } while (value >= limit);
  return value % bound;
}

}  // namespace onepass
