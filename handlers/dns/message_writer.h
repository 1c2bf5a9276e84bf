// Writes a DNS response message into a caller's buffer with name compression
// (RFC 1035 §4.1.4). Per worker: the compression table is scratch reused for every message.
#ifndef ONEPASS_HANDLERS_DNS_MESSAGE_WRITER_H_
#define ONEPASS_HANDLERS_DNS_MESSAGE_WRITER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "handlers/dns/zone_snapshot.h"

namespace onepass::dns {

class MessageWriter {
 public:
  // Names remembered for compression per message; more are written uncompressed.
  static constexpr int kMaxCompressionEntries = 96;

  // Starts a message at `buffer` (at most 65535 bytes are used).
  void Start(absl::Span<uint8_t> buffer);

  size_t size() const { return size_; }
  uint8_t* data() const { return buffer_; }
  // Shrinks the usable space (to keep room for an OPT record written last).
  void Reserve(size_t bytes) { capacity_ = capacity_ > bytes ? capacity_ - bytes : 0; }
  void Unreserve(size_t bytes) { capacity_ = std::min(limit_, capacity_ + bytes); }
  // Drops what was written after `size` (a record that did not fit) and the compression
  // entries that pointed there.
  void Rollback(size_t size);

  // Bytes that can still be written.
  size_t room() const { return Room(); }

  bool WriteBytes(const void* bytes, size_t n);
  // `n` zero bytes (RFC 7830 §3 padding).
  bool WriteZeros(size_t n);
  bool WriteU16(uint16_t value);
  bool WriteU32(uint32_t value);
  // Writes an uncompressed wire name, compressing it against names written before and
  // remembering its suffixes. `name` must stay valid until the message is done.
  bool WriteName(const uint8_t* name, size_t size);
  bool WriteName(absl::string_view name) {
    return WriteName(reinterpret_cast<const uint8_t*>(name.data()), name.size());
  }
  // One resource record of class IN, compressing the names RFC 3597 §4 allows.
  bool WriteRecord(absl::string_view owner, uint16_t type, const Record& record);

 private:
  struct Entry {
    const uint8_t* name;  // a suffix of a name written earlier (original bytes)
    uint16_t size;
    uint16_t offset;  // where it starts in the message
  };
  // Bytes left before the capacity; 0 when a Reserve() took the capacity below the size.
  size_t Room() const { return capacity_ > size_ ? capacity_ - size_ : 0; }
  int Find(const uint8_t* name, size_t size) const;
  void Remember(const uint8_t* name, size_t size, size_t offset);

  uint8_t* buffer_ = nullptr;
  size_t limit_ = 0;
  size_t capacity_ = 0;
  size_t size_ = 0;
  int entry_count_ = 0;
  Entry entries_[kMaxCompressionEntries];
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_MESSAGE_WRITER_H_
