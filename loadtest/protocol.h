// What the load tester knows about one protocol: how to build a request and how to judge the
// server's response. Implementations are immutable after construction and shared read-only by
// every client thread; they share no code with the server's handlers (handlers/), so a mistake
// there cannot hide itself here.
#ifndef ONEPASS_LOADTEST_PROTOCOL_H_
#define ONEPASS_LOADTEST_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace onepass::load {

enum class Verdict {
  kIncomplete,  // need more bytes (or the server's close) to judge
  kOk,          // a complete, correct response
  kShort,       // the server closed before a complete response
  kWrong,       // a complete (or unparseable) response that is not the right answer
};

struct CheckResult {
  Verdict verdict = Verdict::kIncomplete;
  // For kShort/kWrong: a fixed category used to count mismatches ("wrong ID"); static storage.
  const char* reason = "";
  // For kShort/kWrong: the details for the sample printed in the summary.
  std::string detail;

  static CheckResult Incomplete() { return {}; }
  static CheckResult Ok() { return {Verdict::kOk, "", ""}; }
  static CheckResult Short(const char* reason, std::string detail = "") {
    return {Verdict::kShort, reason, std::move(detail)};
  }
  static CheckResult Wrong(const char* reason, std::string detail = "") {
    return {Verdict::kWrong, reason, std::move(detail)};
  }
};

class ProtocolClient {
 public:
  virtual ~ProtocolClient() = default;

  // The protocol's name as given to --proto.
  virtual absl::string_view name() const = 0;

  // Writes the request of transaction number `sequence` (counted per thread) into `out`,
  // replacing its contents. `random` is fresh per transaction (e.g. a DNS message ID).
  virtual void BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const = 0;

  // Judges `response`, every byte received so far on the connection that sent `request`.
  // `closed` is true once the server has closed its side (no more bytes will come).
  // Pure: the same arguments always give the same result. A response judged kOk or kWrong
  // before the close stays so whatever follows (the client closes then).
  virtual CheckResult Check(absl::string_view request, absl::string_view response,
                            bool closed) const = 0;

  // For several queries on one connection (--queries-per-conn): the length of the first
  // whole response at the start of `stream`, 0 while it is incomplete. Only a protocol whose
  // responses frame themselves can carry more than one; the others (ended by the close)
  // return kUnframed.
  static constexpr size_t kUnframed = static_cast<size_t>(-1);
  virtual size_t FrameLength(absl::string_view stream) const { return kUnframed; }

  // Pairs a response with its request when answers come out of order (pipelined queries,
  // RFC 7766 §7): the same key for a request and its response (DNS: the message ID).
  virtual uint32_t MatchKey(absl::string_view message) const { return 0; }
};

// A protocol whose request is the same bytes every time (Whois, RDAP, raw), and whose answer
// may be asked to contain a given text.
class FixedRequestClient : public ProtocolClient {
 public:
  void BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const final {
    *out = request_;
  }

 protected:
  FixedRequestClient(std::string request, std::string expect_substring)
      : request_(std::move(request)), expect_substring_(std::move(expect_substring)) {}
  // Empty: any answer's content will do.
  const std::string& expect_substring() const { return expect_substring_; }

 private:
  const std::string request_;
  const std::string expect_substring_;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_PROTOCOL_H_
