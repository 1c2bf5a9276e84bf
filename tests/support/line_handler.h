// A line protocol for testing the transport (server/) without any real protocol.
//
// A request is the bytes up to and including '\n' (at most max_line_bytes). The response to
// "TEXT" is "worker=<w> TEXT\n", where <w> is the index of the handler (the server creates
// one per worker, in worker order), so a test can tell which worker served it. Special lines:
//   "big N"  → N bytes 'x' then '\n' (large responses: partial writes, write timeouts)
//   "file N" → "body N\n", then N bytes of BodyPattern() attached as a body (OutputBuffer::
//              AttachBody) from a sealed file: the server sends them by sendfile
//   "mem N"  → the same body without its file: sent from memory (N <= kMaxBodyBytes)
//   "drop"   → Action::kClose without an answer
//   "quit"   → answer, then close even with keepalive
// Every complete line at the front of the input is answered (pipelining). With
// RequestContext::keepalive zero the connection closes after those answers (kWriteThenClose)
// unless more_input_expected says more lines are on their way; otherwise it stays open
// (kWriteThenRead). When `out` is full, it stops early and answers
// kWriteThenRead, as the handler contract asks.
#ifndef ONEPASS_TESTS_SUPPORT_LINE_HANDLER_H_
#define ONEPASS_TESTS_SUPPORT_LINE_HANDLER_H_

#include <atomic>
#include <memory>

#include "handlers/handler.h"

namespace onepass::testing {

// The bytes of "file N" and "mem N" bodies: byte i is i % 251 (a shift shows), up to 8 MiB.
inline constexpr size_t kMaxBodyBytes = size_t{8} << 20;
absl::string_view BodyPattern();

struct LineProtocolOptions {
  size_t max_line_bytes = 256;
  size_t output_bytes = 4096;
};

class LineHandler : public Handler {
 public:
  LineHandler(int worker, const LineProtocolOptions& options)
      : worker_(worker), options_(options) {}
  // Handler:
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;

 private:
  const int worker_;
  const LineProtocolOptions options_;
};

class LineHandlerFactory : public HandlerFactory {
 public:
  explicit LineHandlerFactory(const LineProtocolOptions& options = {}) : options_(options) {}
  // HandlerFactory:
  absl::string_view Name() const override { return "line"; }
  std::unique_ptr<Handler> CreateHandler(HandlerCounters& counters) const override {
    return std::make_unique<LineHandler>(next_worker_.fetch_add(1), options_);
  }
  size_t MaxRequestBytes() const override { return options_.max_line_bytes; }
  size_t OutputBufferBytes() const override { return options_.output_bytes; }

 private:
  const LineProtocolOptions options_;
  mutable std::atomic<int> next_worker_{0};
};

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_LINE_HANDLER_H_
