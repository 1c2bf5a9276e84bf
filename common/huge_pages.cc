#include "common/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>

namespace onepass {

void* AllocateHugePageable(size_t bytes) {
  const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* block = std::aligned_alloc(kHugePageBytes, rounded);
  if (block == nullptr) throw std::bad_alloc();
  // Advice only: where the kernel has no transparent huge pages it fails, and the block is
  // ordinary memory.
  madvise(block, rounded, MADV_HUGEPAGE);
  return block;
}

void FreeHugePageable(void* block) { std::free(block); }

}  // namespace onepass
