#include "handlers/dns/message_writer.h"

#include <algorithm>
#include <cstring>

#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

// RFC 1035 §4.1.4: a pointer holds a 14-bit offset.
constexpr size_t kMaxPointerOffset = 0x3fff;

bool EqualIgnoringCase(const uint8_t* a, const uint8_t* b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

// Length of the uncompressed name at the front of `p` (at most `max` bytes), or 0.
size_t NameSize(const uint8_t* p, size_t max) {
  size_t pos = 0;
  while (pos < max) {
    const uint8_t len = p[pos];
    pos += 1 + len;
    if (len == 0) return pos <= max ? pos : 0;
  }
  return 0;
}

}  // namespace

void MessageWriter::Start(absl::Span<uint8_t> buffer) {
  buffer_ = buffer.data();
  limit_ = std::min(buffer.size(), kMaxMessageBytes);
  capacity_ = limit_;
  size_ = 0;
  entry_count_ = 0;
}

void MessageWriter::Rollback(size_t size) {
  size_ = size;
  while (entry_count_ > 0 && entries_[entry_count_ - 1].offset >= size) --entry_count_;
}

bool MessageWriter::WriteBytes(const void* bytes, size_t n) {
  if (Room() < n) return false;
  std::memcpy(buffer_ + size_, bytes, n);
  size_ += n;
  return true;
}

bool MessageWriter::WriteZeros(size_t n) {
  if (Room() < n) return false;
  std::memset(buffer_ + size_, 0, n);
  size_ += n;
  return true;
}

bool MessageWriter::WriteU16(uint16_t value) {
  if (Room() < 2) return false;
  dns::WriteU16(buffer_ + size_, value);
  size_ += 2;
  return true;
}

bool MessageWriter::WriteU32(uint32_t value) {
  if (Room() < 4) return false;
  dns::WriteU32(buffer_ + size_, value);
  size_ += 4;
  return true;
}

int MessageWriter::Find(const uint8_t* name, size_t size) const {
  for (int i = 0; i < entry_count_; ++i) {
    const Entry& entry = entries_[i];
    if (entry.size == size && EqualIgnoringCase(entry.name, name, size)) return i;
  }
  return -1;
}

void MessageWriter::Remember(const uint8_t* name, size_t size, size_t offset) {
  if (offset > kMaxPointerOffset || entry_count_ >= kMaxCompressionEntries) return;
  entries_[entry_count_++] =
      Entry{name, static_cast<uint16_t>(size), static_cast<uint16_t>(offset)};
}

bool MessageWriter::WriteName(const uint8_t* name, size_t size) {
  // Find the longest suffix already in the message; the root itself is never a pointer.
  size_t match_pos = size - 1;
  int match = -1;
  for (size_t pos = 0; pos + 1 < size; pos += 1 + name[pos]) {
    match = Find(name + pos, size - pos);
    if (match >= 0) {
      match_pos = pos;
      break;
    }
  }
  const size_t start = size_;
  const size_t literal = match >= 0 ? match_pos : size;
  if (Room() < literal + (match >= 0 ? 2 : 0)) return false;
  std::memcpy(buffer_ + size_, name, literal);
  size_ += literal;
  if (match >= 0) {
    dns::WriteU16(buffer_ + size_, static_cast<uint16_t>(0xc000 | entries_[match].offset));
    size_ += 2;
  }
  for (size_t pos = 0; pos < match_pos; pos += 1 + name[pos]) {
    Remember(name + pos, size - pos, start + pos);
  }
  return true;
}

bool MessageWriter::WriteRecord(absl::string_view owner, uint16_t type, const Record& record) {
  if (!WriteName(owner) || Room() < 10) return false;
  uint8_t* fixed = buffer_ + size_;
  dns::WriteU16(fixed, type);
  dns::WriteU16(fixed + 2, kClassIn);
  dns::WriteU32(fixed + 4, record.ttl);
  size_ += 10;
  const size_t rdata_start = size_;
  const uint8_t* rdata = reinterpret_cast<const uint8_t*>(record.rdata.data());
  size_t copied = 0;
  for (int i = 0; i < record.compressible_count; ++i) {
    const size_t offset = record.compressible_offsets[i];
    if (!WriteBytes(rdata + copied, offset - copied)) return false;
    const size_t name_size = NameSize(rdata + offset, record.rdata.size() - offset);
    if (name_size == 0 || !WriteName(rdata + offset, name_size)) return false;
    copied = offset + name_size;
  }
  if (!WriteBytes(rdata + copied, record.rdata.size() - copied)) return false;
  dns::WriteU16(fixed + 8, static_cast<uint16_t>(size_ - rdata_start));
  return true;
}

}  // namespace onepass::dns
