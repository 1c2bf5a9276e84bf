#include "server/upstream/upstream_frame_reader.h"

#include <cstring>

namespace onepass {
namespace {

// What one recv may add beyond a largest frame: enough to read a few small frames at once.
constexpr size_t kReadSlackBytes = 16 * 1024;

}  // namespace

UpstreamFrameReader::UpstreamFrameReader(UpstreamStreamConfig::FrameLength frame_length,
                                         size_t max_frame_bytes)
    : frame_length_(frame_length), max_frame_bytes_(max_frame_bytes) {}

absl::Span<uint8_t> UpstreamFrameReader::WritableTail() {
  if (buffer_.empty()) buffer_.resize(max_frame_bytes_ + kReadSlackBytes);
  if (begin_ > 0) {
    const size_t unread = end_ - begin_;
    if (unread > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, unread);
    begin_ = 0;
    end_ = unread;
  }
  // Never empty: Next reports kInvalid before unread bytes reach max_frame_bytes_ + 1 without
  // a whole frame, and a caller stops reading then.
  return {buffer_.data() + end_, buffer_.size() - end_};
}

UpstreamFrameReader::Status UpstreamFrameReader::Next(absl::Span<const uint8_t>& frame) {
  const absl::Span<const uint8_t> unread(buffer_.data() + begin_, end_ - begin_);
  if (unread.empty()) return Status::kIncomplete;
  const ptrdiff_t length = frame_length_(unread);
  if (length < 0 || static_cast<size_t>(length) > max_frame_bytes_) return Status::kInvalid;
  if (length == 0) {
    // Incomplete, and already as long as a largest frame: it can never end within bounds.
    return unread.size() >= max_frame_bytes_ ? Status::kInvalid : Status::kIncomplete;
  }
  if (static_cast<size_t>(length) > unread.size()) return Status::kInvalid;  // a framer bug
  frame = unread.subspan(0, static_cast<size_t>(length));
  begin_ += static_cast<size_t>(length);
  return Status::kFrame;
}

}  // namespace onepass
