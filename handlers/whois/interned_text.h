// What the two snapshots of the registry database share, the Whois one (whois_snapshot.h) and
// the RDAP one (handlers/rdap/rdap_snapshot.h): answers rendered once at load and kept as
// pieces, each distinct text stored once in an arena and numbered, so that what many domains
// share (a registrar's lines, a status list, a name server block) costs its bytes once and an
// answer is a list of views.
#ifndef ONEPASS_HANDLERS_WHOIS_INTERNED_TEXT_H_
#define ONEPASS_HANDLERS_WHOIS_INTERNED_TEXT_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace onepass::whois {

// An answer's body as views into a snapshot, in order; empty pieces are left out.
template <int kMax>
struct PieceList {
  static constexpr int kMaxPieces = kMax;
  std::array<absl::string_view, kMax> pieces;
  int count = 0;

  void Add(absl::string_view piece) {
    if (!piece.empty()) pieces[count++] = piece;
  }
  size_t size() const {
    size_t total = 0;
    for (int i = 0; i < count; ++i) total += pieces[i].size();
    return total;
  }
};

// Append-only storage for rendered text in 1 MiB chunks: pieces never move once stored, so
// views into them stay valid for the arena's life, and growth never copies what is stored.
class TextArena {
 public:
  absl::string_view Store(absl::string_view text);
  size_t bytes_used() const { return used_; }

 private:
  static constexpr size_t kChunkBytes = 1 << 20;
  std::vector<std::unique_ptr<char[]>> chunks_;
  char* free_ = nullptr;
  size_t free_bytes_ = 0;
  size_t used_ = 0;
};

// Texts stored in an arena, the repeated ones numbered (interned): number 0 is the empty text,
// the others count up from 1 in the order first seen. Built at load, then read-only.
class InternedText {
 public:
  InternedText() { texts_.push_back(absl::string_view()); }
  InternedText(const InternedText&) = delete;
  InternedText& operator=(const InternedText&) = delete;

  // Stores `text` once without a number (text only one answer shows).
  absl::string_view Store(absl::string_view text) { return arena_.Store(text); }
  // The number of `text`, stored the first time it is seen; 0 for the empty text.
  uint32_t Intern(absl::string_view text);
  absl::string_view operator[](uint32_t id) const { return texts_[id]; }
  // Ends the load: the lookup by text goes, only the numbered views stay.
  void Seal();

  size_t interned() const { return texts_.size() - 1; }  // distinct texts, the empty one aside
  size_t text_bytes() const { return arena_.bytes_used(); }
  size_t index_bytes() const { return texts_.capacity() * sizeof(absl::string_view); }

 private:
  TextArena arena_;
  std::vector<absl::string_view> texts_;
  absl::flat_hash_map<absl::string_view, uint32_t> by_text_;  // load time only
};

// The counts both snapshots report (--check, the start-up summary).
struct RegistryStats {
  size_t domains = 0;
  size_t nameservers = 0;
  size_t registrars = 0;
  size_t contacts = 0;
  size_t shared_pieces = 0;   // distinct interned pieces
  size_t text_bytes = 0;      // rendered text stored
  size_t index_bytes = 0;     // entries and hash tables, approximately
  size_t max_body_bytes = 0;  // the largest answer body of any kind

  void NoteBody(size_t bytes) { max_body_bytes = std::max(max_body_bytes, bytes); }
};

// The approximate bytes of a flat hash table: its slots and their control bytes.
template <typename Map>
size_t TableBytes(const Map& map) {
  return map.capacity() * (sizeof(typename Map::value_type) + 1);
}

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_INTERNED_TEXT_H_
