// Numbers an off-path attacker must not predict: the DNS frontend's query IDs (RFC 5452 §9.2),
// the choice among shared source ports. Drawn from OpenSSL's CSPRNG (RAND_bytes: a DRBG
// seeded from the kernel, reseeded after fork) in blocks, so a draw costs a few nanoseconds
// and no system call. A Mersenne Twister or absl::BitGen would do for spreading load but not
// here: a few hundred observed outputs of either give away the rest.
//
// Not thread-safe: one per thread (each worker's handler and upstream channel owns one).
#ifndef ONEPASS_COMMON_SECURE_RANDOM_H_
#define ONEPASS_COMMON_SECURE_RANDOM_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace onepass {

class SecureRandom {
 public:
  SecureRandom() = default;
  SecureRandom(const SecureRandom&) = delete;
  SecureRandom& operator=(const SecureRandom&) = delete;
  // A move leaves the source empty (it refills before its next draw), so no two generators
  // ever hand out the same buffered values.
  SecureRandom(SecureRandom&& other) noexcept { *this = std::move(other); }
  SecureRandom& operator=(SecureRandom&& other) noexcept;

  // Uniform over all 2^32 values.
  uint32_t Next32();
  // Uniform over [0, bound); bound > 0. Unbiased (rejection of the short last interval).
  uint32_t Below(uint32_t bound);

 private:
  void Refill();

  std::array<uint32_t, 128> block_{};
  size_t used_ = block_.size();  // empty until the first draw
};

}  // namespace onepass

#endif  // ONEPASS_COMMON_SECURE_RANDOM_H_
