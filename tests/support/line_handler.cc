#include "tests/support/line_handler.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace onepass::testing {
namespace {

absl::Span<const uint8_t> Bytes(absl::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace

Verdict LineHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                             OutputBuffer& out) {
  const absl::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  // Like DNS: more pipelined lines on their way keep the connection (more_input_expected).
  bool close_after = context.keepalive == absl::ZeroDuration() &&
                     (!context.more_input_expected || context.peer_closed);
  size_t consumed = 0;
  while (true) {
    const size_t newline = text.find('\n', consumed);
    if (newline == absl::string_view::npos) break;
    const absl::string_view line = text.substr(consumed, newline - consumed);
    if (line == "drop") return {Action::kClose, newline + 1};
    std::string response;
    size_t big = 0;
    if (absl::StartsWith(line, "big ") && absl::SimpleAtoi(line.substr(4), &big)) {
      response.assign(big, 'x');
      response.push_back('\n');
    } else {
      response = absl::StrCat("worker=", worker_, " ", line, "\n");
    }
    if (!out.Append(Bytes(response))) {
      if (out.empty()) return {Action::kClose, consumed};  // can never be answered
      return {Action::kWriteThenRead, consumed};           // send these first, then go on
    }
    consumed = newline + 1;
    if (line == "quit") {
      close_after = true;
      break;
    }
  }
  if (consumed == 0) {
    // No complete line: wait for more, unless none will come.
    return {context.peer_closed ? Action::kClose : Action::kReadMore, 0};
  }
  return {close_after ? Action::kWriteThenClose : Action::kWriteThenRead, consumed};
}

}  // namespace onepass::testing
