// Reassembles the frames an upstream sends on one stream connection (the stream path of a
// forwarding handler, handlers/handler.h UpstreamStreamConfig): bytes come in as recv cuts
// them, whole frames go out as the handler's frame_length measures them. Knows no protocol.
// Pure (no syscalls); one per stream connection, thread-confined to its worker.
#ifndef ONEPASS_SERVER_UPSTREAM_UPSTREAM_FRAME_READER_H_
#define ONEPASS_SERVER_UPSTREAM_UPSTREAM_FRAME_READER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "handlers/handler.h"

namespace onepass {

class UpstreamFrameReader {
 public:
  enum class Status {
    kFrame,       // one whole frame at the front (Next's `frame`)
    kIncomplete,  // receive more
    kInvalid,     // frame_length said so, or the frame is longer than max_frame_bytes: close
  };

  // `frame_length` must not be null. The buffer (max_frame_bytes plus one read's worth) is
  // allocated on the first WritableTail, so a pooled connection that never opened holds none.
  UpstreamFrameReader(UpstreamStreamConfig::FrameLength frame_length, size_t max_frame_bytes);

  // Where the next recv writes (never empty); then Commit what it wrote. Moves the unread
  // bytes to the front first, which ends the views Next returned.
  absl::Span<uint8_t> WritableTail();
  void Commit(size_t n) { end_ += n; }

  // The next whole frame at the front of the unread bytes, as a view valid until the next
  // WritableTail or Reset. After kInvalid the reader stays invalid until Reset.
  Status Next(absl::Span<const uint8_t>& frame);

  // Forgets every byte (the connection closed); keeps the allocation.
  void Reset() { begin_ = end_ = 0; }
  size_t buffered() const { return end_ - begin_; }

 private:
  UpstreamStreamConfig::FrameLength frame_length_;
  size_t max_frame_bytes_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0;  // first unread byte
  size_t end_ = 0;    // one past the last received byte
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_UPSTREAM_UPSTREAM_FRAME_READER_H_
