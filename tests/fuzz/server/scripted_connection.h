// What the transport fuzzers share (connection_fuzzer.cc, connection_tls_fuzzer.cc): the
// fuzzer's input read as a script, and a handler whose every verdict the script picks,
// including wrong ones (consumed beyond the input, kWriteThenRead without progress, kReadMore
// with output).
#ifndef ONEPASS_TESTS_FUZZ_SERVER_SCRIPTED_CONNECTION_H_
#define ONEPASS_TESTS_FUZZ_SERVER_SCRIPTED_CONNECTION_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "handlers/handler.h"
#include "handlers/output_buffer.h"

namespace onepass::fuzzing {

class Script {
 public:
  Script(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  uint8_t Next() { return pos_ < size_ ? data_[pos_++] : 0; }
  const uint8_t* Take(size_t* n) {
    if (*n > size_ - pos_) *n = size_ - pos_;
    const uint8_t* start = data_ + pos_;
    pos_ += *n;
    return start;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A handler whose every verdict is chosen by the fuzzer, including wrong ones (consumed beyond
// the input, kWriteThenRead without progress, kReadMore with output).
class ScriptedHandler : public Handler {
 public:
  explicit ScriptedHandler(Script* script) : script_(script) {}
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override {
    const uint8_t choice = script_->Next();
    const size_t append = script_->Next() % 48;
    uint8_t bytes[48] = {};
    (void)out.Append({bytes, append});
    Verdict verdict;
    verdict.action = static_cast<Action>(choice % 4);
    verdict.consumed = input.empty() ? 0 : script_->Next() % (input.size() + 3);
    return verdict;
  }

 private:
  Script* script_;
};

}  // namespace onepass::fuzzing

#endif  // ONEPASS_TESTS_FUZZ_SERVER_SCRIPTED_CONNECTION_H_
