// The Whois framer (RFC 3912 §2): the client sends one line ending in CRLF, the server answers
// and closes. The framer finds that line in the bytes received so far. A pure function of its
// input (no state between calls), which makes it split-invariant: a prefix of the input yields
// kIncomplete or the same result as the whole.
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_FRAMER_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_FRAMER_H_

#include <cstddef>

#include "absl/strings/string_view.h"
#include "handlers/whois/whois_query.h"

namespace onepass::whois {

// What the framer found at the front of the received bytes.
struct QueryFrame {
  enum class Kind { kIncomplete, kLine, kError };
  Kind kind = Kind::kIncomplete;
  // kLine: the query, without its CR LF; a view into the input.
  absl::string_view line;
  // kLine: bytes through the line end (or all of them when peer_closed ended the line).
  // kError: the bytes before the one that decided the error (the control byte, or the byte
  // past the length limit), or through the line end of an overlong line: what follows was
  // not read, and the client may still be sending it (the server closes gracefully).
  size_t consumed = 0;
  // kError: why.
  QueryError error = QueryError::kNone;
};

// Finds the query line at the front of `input`. A line ends at LF, with or without the CR
// before it (RFC 3912 asks for CRLF; a bare LF is accepted as most servers do).
//  - NUL or another control byte before the line end: kError at once.
//  - more than `max_query_bytes` before the line end: kError at once, as soon as
//    max_query_bytes + 2 bytes have arrived without LF, so the caller never needs to buffer
//    more than MaxBufferedBytes(max_query_bytes).
//  - `peer_closed` with no line end: the bytes received are the query (a client that sends the
//    query without a newline and shuts down its side, e.g. `printf QUERY | nc -N`); the same
//    rules apply. With no bytes at all: kIncomplete (nothing was asked).
QueryFrame FrameQuery(absl::string_view input, bool peer_closed, size_t max_query_bytes);

// The most bytes FrameQuery answers kIncomplete for, plus one: the query, its CR and its LF.
inline size_t MaxBufferedBytes(size_t max_query_bytes) { return max_query_bytes + 2; }

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_FRAMER_H_
