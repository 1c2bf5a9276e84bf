#include "handlers/dns/rrset_store.h"

#include <utility>

#include "absl/hash/hash.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

RRsetStore::RRsetStore() = default;
RRsetStore::~RRsetStore() = default;
RRsetStore::RRsetStore(RRsetStore&&) noexcept = default;
RRsetStore& RRsetStore::operator=(RRsetStore&&) noexcept = default;

bool RRsetStore::Sharable(uint16_t type) {
  return type == kTypeNs || type == kTypeMx || type == kTypeSrv;
}

RRset* RRsetStore::New(uint16_t type) {
  RRset* rrset;
  if (!free_.empty()) {
    rrset = free_.back();
    free_.pop_back();
  } else {
    if (chunks_.empty() || used_ == chunks_.back().size()) {
      const size_t count =
          chunks_.size() < kSmallChunks ? kSmallChunkRRsets : kHugePageBytes / sizeof(RRset);
      chunks_.emplace_back(count);
      allocated_ += count;
      used_ = 0;
    }
    rrset = &chunks_.back()[used_++];
    ++made_;
  }
  rrset->type = type;
  return rrset;
}

RRset* RRsetStore::Share(RRset* rrset) {
  auto [it, inserted] = shared_.insert(rrset);
  if (inserted) {
    rrset->shared = true;
    return rrset;
  }
  ++shared_hits_;
  // Empty for reuse, freeing the records' block if they had one.
  rrset->records.clear();
  rrset->records.shrink_to_fit();
  rrset->signatures.clear();
  free_.push_back(rrset);
  return const_cast<RRset*>(*it);
}

RRset* RRsetStore::Unshare(const RRset* rrset) {
  RRset* copy = New(rrset->type);
  *copy = *rrset;
  copy->shared = false;
  return copy;
}

void RRsetStore::FinishLoading() { shared_ = {}; }

size_t RRsetStore::ContentHash::operator()(const RRset* rrset) const {
  size_t h = absl::HashOf(rrset->type, rrset->records.size());
  for (const Record& record : rrset->records) h = absl::HashOf(h, record.ttl, record.rdata);
  return h;
}

bool RRsetStore::ContentEq::operator()(const RRset* a, const RRset* b) const {
  if (a->type != b->type || a->records.size() != b->records.size()) return false;
  for (size_t i = 0; i < a->records.size(); ++i) {
    // The other fields follow from the type and the RDATA.
    if (a->records[i].ttl != b->records[i].ttl || a->records[i].rdata != b->records[i].rdata) {
      return false;
    }
  }
  return true;
}

absl::string_view RdataInterner::Intern(absl::string_view bytes, bool dedup) {
  if (!dedup) return arena_.Intern(bytes);
  auto it = seen_.find(bytes);
  if (it != seen_.end()) return *it;
  const absl::string_view copy = arena_.Intern(bytes);
  seen_.insert(copy);
  return copy;
}

}  // namespace onepass::dns
