// What the transport fuzzers share (connection_fuzzer.cc, connection_tls_fuzzer.cc): the
// fuzzer's input read as a script, and a handler whose every verdict the script picks,
// including wrong ones (consumed beyond the input, kWriteThenRead without progress, kReadMore
// with output), and bodies attached after the output (OutputBuffer::AttachBody), sent from a
// sealed file or from memory.
#ifndef ONEPASS_TESTS_FUZZ_SERVER_SCRIPTED_CONNECTION_H_
#define ONEPASS_TESTS_FUZZ_SERVER_SCRIPTED_CONNECTION_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/types/span.h"
#include "common/sealed_bytes.h"
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
    if ((choice & 0x40) != 0) {
      // A body of up to 256 KiB at an offset: from the file (sendfile) or from memory.
      const size_t offset = script_->Next() * size_t{512};
      const size_t size = 1 + script_->Next() * size_t{1024};
      SharedBody body;
      body.bytes = Body().bytes().subspan(offset, size);
      body.file = (choice & 0x20) != 0 ? Body().fd() : -1;
      body.file_offset = offset;
      body.owner = Owner();
      (void)out.AttachBody(std::move(body));
    }
    Verdict verdict;
    verdict.action = static_cast<Action>(choice % 4);
    verdict.consumed = input.empty() ? 0 : script_->Next() % (input.size() + 3);
    return verdict;
  }

 private:
  // Made once per process, never freed.
  static const SealedBytes& Body() {
    static const SealedBytes* body = [] {
      auto made = SealedBytes::Make("fuzz-body", std::string(512 * 1024, 'b'));
      if (!made.ok()) std::abort();
      return made->release();
    }();
    return *body;
  }
  static const std::shared_ptr<const void>& Owner() {
    static const auto* owner = new std::shared_ptr<const void>(&Body(), [](const void*) {});
    return *owner;
  }

  Script* script_;
};

}  // namespace onepass::fuzzing

#endif  // ONEPASS_TESTS_FUZZ_SERVER_SCRIPTED_CONNECTION_H_
