#include "server/core/reuse_learner.h"

#include <bit>

#include "absl/hash/hash.h"

namespace onepass {

ReuseLearner::ReuseLearner(size_t entries)
    : entries_(std::bit_ceil(entries < 1 ? size_t{1} : entries)), mask_(entries_.size() - 1) {}

ReuseLearner::Entry& ReuseLearner::EntryOf(const std::array<uint8_t, 16>& address) {
  return entries_[absl::HashOf(address) & mask_];
}

bool ReuseLearner::KeepOpen(const std::array<uint8_t, 16>& address) {
  Entry& entry = EntryOf(address);
  if (!entry.used || entry.address != address) return true;
  if (entry.one_shot_streak < kOneShotAfter) return true;
  if (++entry.since_probe < kProbeEvery) return false;
  entry.since_probe = 0;
  return true;
}

void ReuseLearner::Learn(const std::array<uint8_t, 16>& address, uint32_t requests) {
  Entry& entry = EntryOf(address);
  if (!entry.used || entry.address != address) entry = Entry{.address = address, .used = true};
  if (requests >= 2) {
    entry.one_shot_streak = 0;
  } else if (entry.one_shot_streak < kOneShotAfter) {
    ++entry.one_shot_streak;
  }
}

}  // namespace onepass
