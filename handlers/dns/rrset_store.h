// Where a zone's RRsets live, and how identical ones are shared.
//
// A TLD's delegations name the same few thousand registrar NS sets over and over: NSD and Knot
// store each copy, this store keeps one. While loading, the loader hands each owner's
// finished RRsets of a sharable type to Share(): an RRset equal to one shared before (same
// type, same records in the same order, same TTLs) is recycled and the node points at the
// first. Shared RRsets are immutable: an owner that changes one (a later record, RRSIGs to
// attach) first takes a private copy (Unshare). RDATA bytes are interned the same way
// (RdataInterner), so that the target names of those NS sets are stored once too.
#ifndef ONEPASS_HANDLERS_DNS_RRSET_STORE_H_
#define ONEPASS_HANDLERS_DNS_RRSET_STORE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "common/huge_pages.h"
#include "handlers/dns/zone_records.h"

namespace onepass::dns {

class RRsetStore {
 public:
  RRsetStore();
  ~RRsetStore();
  RRsetStore(RRsetStore&&) noexcept;
  RRsetStore& operator=(RRsetStore&&) noexcept;
  RRsetStore(const RRsetStore&) = delete;
  RRsetStore& operator=(const RRsetStore&) = delete;

  // Types worth comparing: those whose RRsets repeat across owners (NS sets of registrars,
  // MX and SRV of hosting providers). A, AAAA, DS and signatures are unique per owner:
  // hashing them would cost load time for nothing.
  static bool Sharable(uint16_t type);

  // An empty RRset of `type`, owned by the store; its address never changes.
  RRset* New(uint16_t type);
  // `rrset` (from New, not shared) is complete: returns the identical shared RRset if there
  // is one (and recycles `rrset`), else marks `rrset` shared and returns it.
  RRset* Share(RRset* rrset);
  // A private, unshared copy of a shared RRset, for an owner about to change it.
  RRset* Unshare(const RRset* rrset);
  // Loading is over: drops the table that Share looks up in (nothing is shared afterwards).
  void FinishLoading();

  // For the load report and tests: RRsets made, and how many Share calls found a twin.
  size_t live() const { return made_ - free_.size(); }
  size_t shared_hits() const { return shared_hits_; }
  // RRset slots taken from the allocator (live, free, and the last chunk's unused ones).
  size_t allocated() const { return allocated_; }

 private:
  struct ContentHash {
    size_t operator()(const RRset* rrset) const;
  };
  struct ContentEq {
    bool operator()(const RRset* a, const RRset* b) const;
  };
  // The first chunks hold 4096 RRsets; from the fifth on (a zone of some 15k RRsets and more)
  // a chunk is a huge page of them (common/huge_pages.h), as random lookups on large zones
  // need. Chunks never move: RRsets are pointed at.
  static constexpr size_t kSmallChunkRRsets = 4096;
  static constexpr size_t kSmallChunks = 4;
  using Chunk = std::vector<RRset, HugePageAllocator<RRset>>;

  std::vector<Chunk> chunks_;
  size_t used_ = 0;  // in the last chunk
  size_t allocated_ = 0;
  size_t made_ = 0;
  std::vector<RRset*> free_;  // recycled by Share, reused by New
  absl::flat_hash_set<const RRset*, ContentHash, ContentEq> shared_;
  size_t shared_hits_ = 0;
};

// Copies RDATA into a zone's arena, once per distinct value for the values that repeat
// (name-bearing RDATA, see RRsetStore::Sharable). Lives only while a zone loads.
class RdataInterner {
 public:
  explicit RdataInterner(NameArena& arena) : arena_(arena) {}
  // A view of `bytes` in the arena, the same view for equal `bytes` when `dedup`.
  absl::string_view Intern(absl::string_view bytes, bool dedup);

 private:
  NameArena& arena_;
  absl::flat_hash_set<absl::string_view> seen_;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_RRSET_STORE_H_
