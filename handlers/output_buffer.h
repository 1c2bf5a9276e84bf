// A fixed-capacity byte buffer that a handler appends responses to.
//
// The server owns these (one per worker for the single pass, more from a per-worker pool for
// parked connections) and reuses them, so building a response never allocates after startup.
#ifndef ONEPASS_HANDLERS_OUTPUT_BUFFER_H_
#define ONEPASS_HANDLERS_OUTPUT_BUFFER_H_

#include <cstdint>
#include <cstring>
#include <memory>

#include "absl/types/span.h"

namespace onepass {

class OutputBuffer {
 public:
  // Allocates `capacity` bytes once.
  explicit OutputBuffer(size_t capacity)
      : data_(std::make_unique_for_overwrite<uint8_t[]>(capacity)), capacity_(capacity) {}

  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  size_t available() const { return capacity_ - size_; }
  bool empty() const { return size_ == 0; }
  absl::Span<const uint8_t> contents() const { return {data_.get(), size_}; }

  // Appends all of `bytes`, or nothing and returns false when they do not fit.
  [[nodiscard]] bool Append(absl::Span<const uint8_t> bytes) {
    if (bytes.size() > available()) return false;
    if (!bytes.empty()) std::memcpy(data_.get() + size_, bytes.data(), bytes.size());
    size_ += bytes.size();
    return true;
  }

  // For building in place: the free space after the contents. Write into it, then Commit().
  absl::Span<uint8_t> WritableTail() { return {data_.get() + size_, available()}; }
  // Adds `n` bytes written into WritableTail() to the contents. Requires n <= available().
  void Commit(size_t n) { size_ += n; }

  // Drops the first `n` bytes (after a partial send), keeping the rest at the front.
  void Consume(size_t n) {
    if (n >= size_) {
      size_ = 0;
      return;
    }
    std::memmove(data_.get(), data_.get() + n, size_ - n);
    size_ -= n;
  }
  void Clear() { size_ = 0; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_;
  size_t size_ = 0;
};

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_OUTPUT_BUFFER_H_
