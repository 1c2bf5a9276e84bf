// Writes a response's pieces into an OutputBuffer's free tail in one go: either every piece
// fits and is committed, or nothing is (a response is never sent cut short).
#ifndef ONEPASS_HANDLERS_HTTP_TAIL_WRITER_H_
#define ONEPASS_HANDLERS_HTTP_TAIL_WRITER_H_

#include <cstdint>
#include <cstring>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "handlers/output_buffer.h"

namespace onepass::http {

class TailWriter {
 public:
  explicit TailWriter(OutputBuffer& out) : out_(out), tail_(out.WritableTail()) {}

  void Add(absl::string_view piece) {
    if (!fits_ || piece.size() > tail_.size() - size_) {
      fits_ = false;
      return;
    }
    std::memcpy(tail_.data() + size_, piece.data(), piece.size());
    size_ += piece.size();
  }

  void AddDecimal(uint64_t value) {
    char digits[20];
    size_t n = 0;
    do {
      digits[sizeof(digits) - ++n] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    Add(absl::string_view(digits + sizeof(digits) - n, n));
  }

  bool Commit() {
    if (fits_) out_.Commit(size_);
    return fits_;
  }

 private:
  OutputBuffer& out_;
  absl::Span<uint8_t> tail_;
  size_t size_ = 0;
  bool fits_ = true;
};

}  // namespace onepass::http

#endif  // ONEPASS_HANDLERS_HTTP_TAIL_WRITER_H_
