#include "server/transport/input_buffer.h"

#include <cstring>

namespace onepass {

void InputBuffer::Consume(size_t n) {
  begin_ += n < size() ? n : size();
  if (begin_ == end_) begin_ = end_ = 0;
}

absl::Span<uint8_t> InputBuffer::WritableTail() {
  if (begin_ > 0) {
    // Only the tail of an incomplete request is left here: a short move.
    std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  return {data_.get() + end_, capacity_ - end_};
}

}  // namespace onepass
