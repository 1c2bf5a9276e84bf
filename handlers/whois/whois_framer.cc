#include "handlers/whois/whois_framer.h"

#include <algorithm>

namespace onepass::whois {
namespace {

// A byte the query line may not hold (RFC 3912 §2 queries are text). TAB separates words.
bool IsControlByte(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

}  // namespace

QueryFrame FrameQuery(absl::string_view input, bool peer_closed, size_t max_query_bytes) {
  QueryFrame frame;
  // Only the first max_query_bytes + 2 bytes matter: a line end later than that means the
  // query is too long anyway.
  const size_t scan = std::min(input.size(), MaxBufferedBytes(max_query_bytes));
  for (size_t i = 0; i < scan; ++i) {
    const unsigned char c = static_cast<unsigned char>(input[i]);
    if (c == '\n') {
      size_t length = i;
      if (length > 0 && input[length - 1] == '\r') --length;
      if (length > max_query_bytes) {
        frame.kind = QueryFrame::Kind::kError;
        frame.error = QueryError::kTooLong;
        frame.consumed = i + 1;
        return frame;
      }
      frame.kind = QueryFrame::Kind::kLine;
      frame.line = input.substr(0, length);
      frame.consumed = i + 1;
      return frame;
    }
    if (c == '\r') {
      // A CR is only a line end's first half. As the last byte received it may still be.
      if (i + 1 == input.size()) continue;
      if (input[i + 1] == '\n') continue;
    }
    if (c == 0) {
      frame.kind = QueryFrame::Kind::kError;
      frame.error = QueryError::kNulByte;
      frame.consumed = i;
      return frame;
    }
    if (IsControlByte(c)) {
      frame.kind = QueryFrame::Kind::kError;
      frame.error = QueryError::kControlByte;
      frame.consumed = i;
      return frame;
    }
  }
  if (input.size() >= MaxBufferedBytes(max_query_bytes)) {
    frame.kind = QueryFrame::Kind::kError;
    frame.error = QueryError::kTooLong;
    frame.consumed = scan - 1;  // decided by the last byte scanned, which is not a line end
    return frame;
  }
  if (peer_closed && !input.empty()) {
    // No line end will come: the bytes are the query (a trailing CR is the line end's half).
    absl::string_view line = input;
    if (line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max_query_bytes) {
      frame.kind = QueryFrame::Kind::kError;
      frame.error = QueryError::kTooLong;
      frame.consumed = input.size();  // the peer closed: nothing more comes
      return frame;
    }
    frame.kind = QueryFrame::Kind::kLine;
    frame.line = line;
    frame.consumed = input.size();
    return frame;
  }
  return frame;  // kIncomplete
}

}  // namespace onepass::whois
