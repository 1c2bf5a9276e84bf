// Received bytes not yet consumed: a connection's request bytes (server/core/connection.h), or
// the ciphertext its TLS layer has not fed yet (server/transport/tls/tls_transport.h). Fixed
// capacity, allocated once.
#ifndef ONEPASS_SERVER_TRANSPORT_INPUT_BUFFER_H_
#define ONEPASS_SERVER_TRANSPORT_INPUT_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/types/span.h"

namespace onepass {

class InputBuffer {
 public:
  explicit InputBuffer(size_t capacity)
      : data_(std::make_unique_for_overwrite<uint8_t[]>(capacity)), capacity_(capacity) {}

  absl::Span<const uint8_t> contents() const { return {data_.get() + begin_, end_ - begin_}; }
  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  size_t capacity() const { return capacity_; }

  // Drops `n` <= size() bytes from the front.
  void Consume(size_t n);
  // Free space after the contents, moving the contents to the front first.
  absl::Span<uint8_t> WritableTail();
  // Adds `n` bytes written into WritableTail() to the contents.
  void Commit(size_t n) { end_ += n; }
  void Clear() { begin_ = end_ = 0; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_TRANSPORT_INPUT_BUFFER_H_
