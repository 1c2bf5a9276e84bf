#include "tests/support/line_handler.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/sealed_bytes.h"

namespace onepass::testing {
namespace {

absl::Span<const uint8_t> Bytes(absl::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

// The pattern in sealed memory, made once for the process and never freed (tests only).
const SealedBytes& SealedPattern() {
  static const SealedBytes* sealed = [] {
    std::string pattern(kMaxBodyBytes, '\0');
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<char>(i % 251);
    absl::StatusOr<std::unique_ptr<const SealedBytes>> made = SealedBytes::Make("body", pattern);
    if (!made.ok()) std::abort();
    return made->release();
  }();
  return *sealed;
}

}  // namespace

absl::string_view BodyPattern() { return SealedPattern().view(); }

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
    const bool file = absl::StartsWith(line, "file ");
    if ((file || absl::StartsWith(line, "mem ")) &&
        absl::SimpleAtoi(line.substr(file ? 5 : 4), &big) && big > 0 && big <= kMaxBodyBytes) {
      if (!out.Append(Bytes(absl::StrCat("body ", big, "\n")))) {
        if (out.empty()) return {Action::kClose, consumed};
        return {Action::kWriteThenRead, consumed};
      }
      SharedBody body;
      body.bytes = SealedPattern().bytes().first(big);
      body.file = file ? SealedPattern().fd() : -1;
      // Never freed, so an owner that never expires (the server keeps its file by the owner).
      static const auto* forever =
          new std::shared_ptr<const void>(&SealedPattern(), [](const void*) {});
      body.owner = *forever;
      if (!out.AttachBody(std::move(body))) std::abort();  // Append above would have failed
      consumed = newline + 1;
      // Nothing may follow a body: the next lines wait until it is sent.
      if (!close_after || consumed < text.size()) return {Action::kWriteThenRead, consumed};
      return {Action::kWriteThenClose, consumed};
    }
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
