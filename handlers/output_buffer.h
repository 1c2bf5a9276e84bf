// A fixed-capacity byte buffer that a handler appends responses to.
//
// The server owns these (one per worker for the single pass, more from a per-worker pool for
// parked connections) and reuses them, so building a response never allocates after startup.
//
// A response may end in a body the handler does not copy (AttachBody): bytes of its immutable
// snapshot, a CRL of several megabytes, sent after the buffer's contents from where the
// snapshot keeps them (sendfile(2) from their sealed file on plain TCP). The buffers then stay
// small however large the bodies (docs/design.md "Large bodies").
#ifndef ONEPASS_HANDLERS_OUTPUT_BUFFER_H_
#define ONEPASS_HANDLERS_OUTPUT_BUFFER_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/types/span.h"

namespace onepass {

// A body sent as it is from the handler's snapshot: `bytes`, also readable from `file` at
// `file_offset` when the snapshot keeps them in a file (common/sealed_bytes.h; -1: no file).
// `owner` keeps both alive until the body is sent or the connection gone, across a reload.
struct SharedBody {
  absl::Span<const uint8_t> bytes;
  int file = -1;
  uint64_t file_offset = 0;
  std::shared_ptr<const void> owner;
};

class OutputBuffer {
 public:
  // Allocates `capacity` bytes once.
  explicit OutputBuffer(size_t capacity)
      : data_(std::make_unique_for_overwrite<uint8_t[]>(capacity)), capacity_(capacity) {}

  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  const uint8_t* data() const { return data_.get(); }
  // The buffer's own bytes, before the body.
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  // Room in the buffer; none once a body is attached (nothing may follow it).
  size_t available() const { return has_body() ? 0 : capacity_ - size_; }
  // Nothing left to send: no bytes and no body.
  bool empty() const { return size_ == 0 && body_.bytes.empty(); }
  absl::Span<const uint8_t> contents() const { return {data_.get(), size_}; }

  // Ends the output with `body` (not empty), sent after the contents. False when a body is
  // already attached. After it, appends fail: the handler stops, as when the buffer is full.
  [[nodiscard]] bool AttachBody(SharedBody body) {
    if (has_body() || body.bytes.empty()) return false;
    body_ = std::move(body);
    return true;
  }
  bool has_body() const { return !body_.bytes.empty(); }
  // What is left of the body (all of it until the contents are sent).
  const SharedBody& body() const { return body_; }
  // Contents and body: what the output still has to send.
  size_t pending() const { return size_ + body_.bytes.size(); }
  // The next bytes to send: the contents, or once they are sent, the rest of the body.
  absl::Span<const uint8_t> front() const { return size_ > 0 ? contents() : body_.bytes; }
  // Drops `n` bytes sent from front() (n <= front().size()).
  void ConsumeFront(size_t n) {
    if (size_ > 0) {
      Consume(n);
      return;
    }
    body_.bytes.remove_prefix(n);
    body_.file_offset += n;
    if (body_.bytes.empty()) body_ = SharedBody();  // let go of the snapshot at once
  }

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

  // Marks the end of one protocol message at the end of the contents. An encrypting transport
  // ends a TLS record there: DNS-over-TLS stubs such as getdns take one DNS message out of each
  // record and leave the rest of a record of 20 pipelined answers unread (stubby answered 1
  // of 20). The first kMaxMessageEnds marks between two sends count; further messages share
  // records.
  void EndMessage() {
    const uint64_t end = consumed_ + size_;
    if (ends_count_ == kMaxMessageEnds || end == consumed_) return;
    if (ends_count_ > 0 && ends_[(ends_head_ + ends_count_ - 1) % kMaxMessageEnds] == end) return;
    ends_[(ends_head_ + ends_count_) % kMaxMessageEnds] = end;
    ++ends_count_;
  }
  // Commit(n), then EndMessage(): `n` bytes that end one message.
  void CommitMessage(size_t n) {
    Commit(n);
    EndMessage();
  }
  // The contents from the front to the next message end (all of them when none is marked).
  size_t FrontMessageBytes() const {
    if (ends_count_ == 0) return size_;
    const uint64_t end = ends_[ends_head_] - consumed_;
    return end < size_ ? static_cast<size_t>(end) : size_;
  }

  // Drops the first `n` bytes (after a partial send), keeping the rest at the front.
  void Consume(size_t n) {
    if (n >= size_) n = size_;
    consumed_ += n;
    while (ends_count_ > 0 && ends_[ends_head_] <= consumed_) {
      ends_head_ = (ends_head_ + 1) % kMaxMessageEnds;
      --ends_count_;
    }
    if (n == size_) {
      size_ = 0;
      return;
    }
    std::memmove(data_.get(), data_.get() + n, size_ - n);
    size_ -= n;
  }
  void Clear() {
    size_ = 0;
    body_ = SharedBody();
    consumed_ = 0;
    ends_head_ = ends_count_ = 0;
  }

  static constexpr size_t kMaxMessageEnds = 64;

 private:
  std::unique_ptr<uint8_t[]> data_;
  size_t capacity_;
  size_t size_ = 0;
  SharedBody body_;
  // Message ends (EndMessage), as offsets from the first byte since Clear; consumed_ bytes of
  // that stream have left the front. A ring of ends_count_ from ends_head_.
  uint64_t consumed_ = 0;
  std::array<uint64_t, kMaxMessageEnds> ends_{};
  size_t ends_head_ = 0;
  size_t ends_count_ = 0;
};

}  // namespace onepass

#endif  // ONEPASS_HANDLERS_OUTPUT_BUFFER_H_
