// Memory for large tables read at random: a zone's name table and name arena at millions of
// names. Each lookup there touches a few cache lines far apart, and with 4 KiB pages each of
// them also misses the TLB (a 10M-name zone spans gigabytes). Blocks of at least half of
// kHugePageBytes are rounded up to whole huge pages, 2 MiB-aligned and advised as huge-page memory
// (madvise MADV_HUGEPAGE: transparent huge pages in "madvise" mode, the setting most distributions'
// servers run with; with "always" the advice changes nothing, with "never" the kernel ignores it).
// Smaller blocks come from the allocator as usual: a small zone keeps small pages and a small RSS.
#ifndef ONEPASS_COMMON_HUGE_PAGES_H_
#define ONEPASS_COMMON_HUGE_PAGES_H_

#include <cstddef>
#include <memory>
#include <new>

namespace onepass {

inline constexpr size_t kHugePageBytes = size_t{2} << 20;

// `bytes` (rounded up to whole huge pages), 2 MiB-aligned and advised; throws std::bad_alloc as
// operator new does.
void* AllocateHugePageable(size_t bytes);
// Frees what AllocateHugePageable returned.
void FreeHugePageable(void* block);

// A std allocator that takes blocks of half of kHugePageBytes or more from
// AllocateHugePageable (for absl::flat_hash_map's slot array, one block sized by the table, and
// for chunks of nearly a huge page).
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBytes / 2) return std::allocator<T>().allocate(n);
    return static_cast<T*>(AllocateHugePageable(bytes));
  }
  void deallocate(T* block, size_t n) {
    if (n * sizeof(T) < kHugePageBytes / 2) {
      std::allocator<T>().deallocate(block, n);
    } else {
      FreeHugePageable(block);
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
  template <class U>
  bool operator!=(const HugePageAllocator<U>&) const {
    return false;
  }
};

}  // namespace onepass

#endif  // ONEPASS_COMMON_HUGE_PAGES_H_
