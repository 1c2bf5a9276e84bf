// Feeds a response to a ProtocolClient the way the client thread does (growing buffer, a
// check after every piece, a last check at the close), for split-invariance tests.
#ifndef ONEPASS_TESTS_UNIT_LOADTEST_FEED_H_
#define ONEPASS_TESTS_UNIT_LOADTEST_FEED_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "loadtest/protocol.h"

namespace onepass::load {

// `cuts`: the sizes of the pieces in order (their sum must be response.size()).
inline CheckResult FeedPieces(const ProtocolClient& client, absl::string_view request,
                              absl::string_view response, const std::vector<size_t>& cuts,
                              bool closed) {
  std::string buffer;
  size_t at = 0;
  for (size_t piece : cuts) {
    absl::string_view part = response.substr(at, piece);
    buffer.append(part.data(), part.size());
    at += piece;
    CheckResult result = client.Check(request, buffer, false);
    if (result.verdict != Verdict::kIncomplete) return result;
  }
  if (!closed) return CheckResult::Incomplete();
  CheckResult result = client.Check(request, buffer, true);
  if (result.verdict == Verdict::kIncomplete) return CheckResult::Short("(incomplete at close)");
  return result;
}

inline CheckResult FeedWhole(const ProtocolClient& client, absl::string_view request,
                             absl::string_view response, bool closed) {
  if (response.empty()) return FeedPieces(client, request, response, {}, closed);
  return FeedPieces(client, request, response, {response.size()}, closed);
}

// Whole, byte by byte and every two-way split all give the same verdict and reason; returns
// the first disagreement, or "" when there is none.
inline std::string SplitDisagreement(const ProtocolClient& client, absl::string_view request,
                                     absl::string_view response, bool closed) {
  CheckResult whole = FeedWhole(client, request, response, closed);
  auto differs = [&](const CheckResult& other) {
    return other.verdict != whole.verdict || std::string(other.reason) != whole.reason;
  };
  std::vector<size_t> bytes(response.size(), 1);
  CheckResult byte_by_byte = FeedPieces(client, request, response, bytes, closed);
  if (differs(byte_by_byte)) {
    return std::string("byte by byte: ") + byte_by_byte.reason + " vs whole: " + whole.reason;
  }
  for (size_t split = 1; split < response.size(); ++split) {
    CheckResult two =
        FeedPieces(client, request, response, {split, response.size() - split}, closed);
    if (differs(two)) {
      return "split at " + std::to_string(split) + ": " + two.reason + " vs whole: " + whole.reason;
    }
  }
  return "";
}

}  // namespace onepass::load

#endif  // ONEPASS_TESTS_UNIT_LOADTEST_FEED_H_
