#include "handlers/whois/interned_text.h"

#include <cstring>

namespace onepass::whois {

absl::string_view TextArena::Store(absl::string_view text) {
  if (text.empty()) return absl::string_view();
  if (text.size() > free_bytes_) {
    const size_t size = std::max(kChunkBytes, text.size());
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    free_ = chunks_.back().get();
    free_bytes_ = size;
  }
  std::memcpy(free_, text.data(), text.size());
  absl::string_view stored(free_, text.size());
  free_ += text.size();
  free_bytes_ -= text.size();
  used_ += text.size();
  return stored;
}

uint32_t InternedText::Intern(absl::string_view text) {
  if (text.empty()) return 0;
  auto it = by_text_.find(text);
  if (it != by_text_.end()) return it->second;
  const absl::string_view stored = arena_.Store(text);
  const uint32_t id = static_cast<uint32_t>(texts_.size());
  texts_.push_back(stored);
  by_text_.emplace(stored, id);  // keyed by the stored copy: no second copy of the text
  return id;
}

void InternedText::Seal() {
  by_text_ = {};
  texts_.shrink_to_fit();
}

}  // namespace onepass::whois
