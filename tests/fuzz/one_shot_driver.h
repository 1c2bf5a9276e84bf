// Drives a one-request-per-connection handler (Whois, RDAP) through the Handler interface as
// the server does, for the fuzz targets, and checks what such a handler promises whatever
// the input:
//  - consumed <= input size; kReadMore only while the peer may still send, below
//    MaxRequestBytes and with nothing written;
//  - kWriteThenClose with an answer the target's own check accepts; kClose only for nothing
//    received from a closed peer; never kWriteThenRead or kWaitUpstream;
//  - split invariance: with the request complete, a later close of the peer changes nothing,
//    and the verdict on a prefix (one split point derived from the input) is kReadMore or the
//    answer to the whole.
#ifndef ONEPASS_TESTS_FUZZ_ONE_SHOT_DRIVER_H_
#define ONEPASS_TESTS_FUZZ_ONE_SHOT_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "handlers/handler.h"
#include "handlers/output_buffer.h"

namespace onepass::fuzz {

inline void Check(bool condition) {
  if (!condition) std::abort();
}

class OneShotDriver {
 public:
  // `check_answer` aborts (Check) on an answer the handler must not give.
  OneShotDriver(std::unique_ptr<HandlerFactory> factory,
                std::function<void(const std::string&)> check_answer)
      : factory_(std::move(factory)),
        check_answer_(std::move(check_answer)),
        counters_(factory_->Counters().size()),
        handler_(factory_->CreateHandler(counters_)),
        out_(factory_->OutputBufferBytes()) {}

  // The checks above on `data`.
  void Fuzz(const uint8_t* data, size_t size) {
    const Outcome whole = Run(data, size, /*peer_closed=*/true);
    const Outcome open = Run(data, size, /*peer_closed=*/false);
    if (open.verdict.action != Action::kReadMore) {
      Check(open.answer == whole.answer);
      Check(open.verdict.consumed == whole.verdict.consumed);
    }
    if (size > 0) {
      const size_t split = data[0] % (size + 1);
      const Outcome prefix = Run(data, split, /*peer_closed=*/false);
      if (prefix.verdict.action != Action::kReadMore) Check(prefix.answer == open.answer);
    }
  }

 private:
  struct Outcome {
    Verdict verdict;
    std::string answer;
  };

  Outcome Run(const uint8_t* data, size_t size, bool peer_closed) {
    out_.Clear();
    RequestContext context;
    context.peer_closed = peer_closed;
    Outcome outcome;
    outcome.verdict = handler_->Process(absl::Span<const uint8_t>(data, size), context, out_);
    outcome.answer.assign(reinterpret_cast<const char*>(out_.data()), out_.size());
    Check(outcome.verdict.consumed <= size);
    switch (outcome.verdict.action) {
      case Action::kReadMore:
        Check(!peer_closed);
        Check(outcome.answer.empty());
        Check(size < factory_->MaxRequestBytes());
        break;
      case Action::kWriteThenClose:
        check_answer_(outcome.answer);
        break;
      case Action::kClose:
        Check(size == 0 && peer_closed);
        break;
      case Action::kWriteThenRead:  // one request per connection
      case Action::kWaitUpstream:   // nothing forwarded
        Check(false);
        break;
    }
    return outcome;
  }

  const std::unique_ptr<HandlerFactory> factory_;
  const std::function<void(const std::string&)> check_answer_;
  HandlerCounters counters_;
  std::unique_ptr<Handler> handler_;
  OutputBuffer out_;
};

}  // namespace onepass::fuzz

#endif  // ONEPASS_TESTS_FUZZ_ONE_SHOT_DRIVER_H_
