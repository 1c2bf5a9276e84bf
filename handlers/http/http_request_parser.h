// A strict HTTP/1.1 (RFC 9112) request parser for a one-request-per-connection responder.
//
// Contract in the manner of picohttpparser: given all bytes received so far, the parser says
// complete (and how many bytes the request took), incomplete (call again with more bytes), or
// error (with the HTTP status to answer and a reason). It keeps no state between calls: the
// server hands back every unconsumed byte each time, so a request split anywhere parses the same
// (the unit tests check every 2-way split and byte-by-byte feeding).
//
// It reads left to right and decides at the first byte that breaks a rule, so garbage is
// rejected as soon as it arrives, and a prefix of any input parses either as incomplete or
// exactly as the whole input does. Only the first `max_header_bytes` bytes are ever examined
// for the head; a head that does not end within them is 414 (still in the request line) or 431.
//
// What it rejects, because each is a request-smuggling or desynchronisation vector when two
// HTTP implementations disagree (RFC 9112 §11.2):
//  - bare CR (§2.2) and bare LF line endings (§2.2 permits accepting LF; we do not);
//  - obs-fold (§5.2) and whitespace between a field name and its colon (§5.1);
//  - Transfer-Encoding at all (501, §6.1; 400 when Content-Length is also present, §6.3);
//  - a Content-Length that is not 1*DIGIT, or that appears twice even with equal values (§6.3);
//  - a missing or repeated Host in HTTP/1.1 (§3.2), a repeated Content-Type;
//  - control characters in field values, non-token field names and methods.
// The body is only ever Content-Length bytes (no chunked coding) and at most `max_body_bytes`.
#ifndef ONEPASS_HANDLERS_HTTP_HTTP_REQUEST_PARSER_H_
#define ONEPASS_HANDLERS_HTTP_HTTP_REQUEST_PARSER_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace onepass::http {

struct HttpLimits {
  // Request line + header fields + the empty line, in bytes.
  size_t max_header_bytes = 8192;
  // Content-Length above this is answered 413 as soon as the head is read.
  size_t max_body_bytes = 16384;
};

// Why a request was refused; each maps to one status code (HttpErrorStatus).
enum class HttpError {
  kNone,
  kMalformedRequestLine,        // 400
  kUnsupportedVersion,          // 505: HTTP/2+ in an HTTP/1.x request line
  kRequestLineTooLong,          // 414
  kHeaderTooLarge,              // 431
  kBareCr,                      // 400
  kBareLf,                      // 400
  kObsFold,                     // 400
  kWhitespaceBeforeColon,       // 400
  kMalformedHeaderField,        // 400
  kInvalidContentLength,        // 400
  kRepeatedContentLength,       // 400
  kTransferEncodingWithLength,  // 400
  kTransferEncoding,            // 501
  kMissingHost,                 // 400
  kRepeatedHost,                // 400
  kRepeatedContentType,         // 400
  kBodyTooLarge,                // 413
  kIncompleteRequest,           // 400: the peer closed mid-request (used by the handler)
};

int HttpErrorStatus(HttpError error);
// A short lowercase phrase for logs and response bodies, e.g. "obs-fold in header field".
absl::string_view HttpErrorText(HttpError error);

// The parsed request: views into the input, valid while the input is.
struct HttpRequest {
  absl::string_view method;
  absl::string_view target;
  int minor_version = 1;  // HTTP/1.<minor_version>
  bool has_content_type = false;
  absl::string_view content_type;  // field value, OWS trimmed
  bool has_content_length = false;
  absl::string_view body;  // Content-Length bytes after the head (empty without one)
  // Conditional request fields (RFC 9110 §13.1.2, §13.1.3), values OWS-trimmed. Repeated
  // If-None-Match lines are a list (§5.3): only the last one is kept, which can only turn a
  // 304 into a 200, never the reverse.
  bool has_if_none_match = false;
  absl::string_view if_none_match;
  bool has_if_modified_since = false;
  absl::string_view if_modified_since;
  // Range and If-Range (RFC 9110 §14.2, §13.1.5), OWS-trimmed; the last one kept.
  bool has_range = false;
  absl::string_view range;
  bool has_if_range = false;
  absl::string_view if_range;
  // `Expect: 100-continue` (RFC 9110 §10.1.1, any case): the client may wait for an interim
  // 100 before sending the content. Other expectations are ignored.
  bool expect_continue = false;
};

enum class HttpParseStatus { kComplete, kIncomplete, kError };

struct HttpParseResult {
  HttpParseStatus status = HttpParseStatus::kIncomplete;
  // kComplete: bytes of head + body. kError: the offset of the byte that decided the error,
  // always < input.size(): what follows it is not parsed, and the client may still be
  // sending the rest of the request (the server then closes gracefully, RFC 9112 §9.6).
  size_t consumed = 0;
  HttpError error = HttpError::kNone;  // kError: why
  // kComplete, and kIncomplete once the head is complete and the body is awaited: the head's
  // size (`request` then holds every head field).
  size_t head_bytes = 0;
};

// Parses the request at the front of `input`. Bytes after it (pipelined requests) are left.
HttpParseResult ParseHttpRequest(absl::string_view input, const HttpLimits& limits,
                                 HttpRequest& request);

}  // namespace onepass::http

#endif  // ONEPASS_HANDLERS_HTTP_HTTP_REQUEST_PARSER_H_
