#include "handlers/http/http_request_parser.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/match.h"

namespace onepass::http {
namespace {

// tchar (RFC 9110 §5.6.2): the characters of methods and field names.
constexpr bool IsTchar(unsigned char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

// request-target characters: visible ASCII (RFC 9112 §3.2; URI characters are a subset).
constexpr bool IsVchar(unsigned char c) { return c >= 0x21 && c <= 0x7E; }

// field-value characters (RFC 9110 §5.5): VCHAR, obs-text, SP, HTAB. No other controls.
constexpr bool IsFieldValueChar(unsigned char c) {
  return c == ' ' || c == '\t' || (c >= 0x21 && c != 0x7F);
}

constexpr bool IsOws(unsigned char c) { return c == ' ' || c == '\t'; }

// Content-Length values above this are all "too large" however many digits follow.
constexpr uint64_t kContentLengthCap = uint64_t{1} << 40;

enum class Step { kOk, kNeedMore, kError };

// Walks the head (request line and header fields) of one request, left to right.
class HeadParser {
 public:
  HeadParser(absl::string_view input, const HttpLimits& limits, HttpRequest& request)
      : data_(reinterpret_cast<const unsigned char*>(input.data())),
        end_(std::min(input.size(), limits.max_header_bytes)),
        request_(request) {}

  // kOk: the head is complete and valid; head_size() bytes long.
  Step Parse() {
    Step step = ParseRequestLine();
    if (step != Step::kOk) return step;
    in_request_line_ = false;
    for (;;) {
      bool end_of_head = false;
      step = ParseFieldLine(end_of_head);
      if (step != Step::kOk) return step;
      if (end_of_head) return CheckHead();
    }
  }

  HttpError error() const { return error_; }
  size_t error_at() const { return error_at_; }
  size_t head_size() const { return pos_; }
  bool in_request_line() const { return in_request_line_; }
  uint64_t content_length() const { return content_length_; }

 private:
  // An error decided by the byte at pos_ (or the LF just after it, for a bare CR).
  Step Fail(HttpError error) {
    error_ = error;
    error_at_ = std::min(pos_, end_ - 1);
    return Step::kError;
  }
  // An error decided by a whole line (a field's value, the version, the head as a whole):
  // the deciding byte is the line's LF, just consumed.
  Step FailAfterLine(HttpError error) {
    error_ = error;
    error_at_ = pos_ - 1;
    return Step::kError;
  }

  // At a CR: consumes CR LF.
  Step ConsumeCrLf() {
    if (pos_ + 1 >= end_) return Step::kNeedMore;
    if (data_[pos_ + 1] != '\n') return Fail(HttpError::kBareCr);
    pos_ += 2;
    return Step::kOk;
  }

  // At the end of a line's content: CRLF, or the error that the byte there is.
  Step ConsumeLineEnd(HttpError otherwise) {
    if (pos_ == end_) return Step::kNeedMore;
    if (data_[pos_] == '\r') return ConsumeCrLf();
    if (data_[pos_] == '\n') return Fail(HttpError::kBareLf);
    return Fail(otherwise);
  }

  // request-line = method SP request-target SP HTTP-version CRLF (RFC 9112 §3)
  Step ParseRequestLine() {
    const size_t method_start = pos_;
    while (pos_ < end_ && IsTchar(data_[pos_])) ++pos_;
    if (pos_ == end_) return Step::kNeedMore;
    if (data_[pos_] != ' ' || pos_ == method_start) return Fail(HttpError::kMalformedRequestLine);
    request_.method = View(method_start, pos_);
    ++pos_;

    const size_t target_start = pos_;
    while (pos_ < end_ && IsVchar(data_[pos_])) ++pos_;
    if (pos_ == end_) return Step::kNeedMore;
    if (data_[pos_] != ' ' || pos_ == target_start) return Fail(HttpError::kMalformedRequestLine);
    request_.target = View(target_start, pos_);
    ++pos_;

    // HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3); 'D' stands for a digit.
    constexpr absl::string_view kVersionPattern = "HTTP/D.D";
    for (char expected : kVersionPattern) {
      if (pos_ == end_) return Step::kNeedMore;
      const unsigned char c = data_[pos_];
      const bool ok = expected == 'D' ? (c >= '0' && c <= '9') : c == expected;
      if (!ok) return Fail(HttpError::kMalformedRequestLine);
      ++pos_;
    }
    const int major = data_[pos_ - 3] - '0';
    request_.minor_version = data_[pos_ - 1] - '0';
    const Step step = ConsumeLineEnd(HttpError::kMalformedRequestLine);
    if (step != Step::kOk) return step;
    // A 1.x server answers any 1.x request as 1.1 (RFC 9112 §2.3); other majors are not ours.
    if (major != 1) return FailAfterLine(HttpError::kUnsupportedVersion);
    return Step::kOk;
  }

  // field-line = field-name ":" OWS field-value OWS CRLF (RFC 9112 §5), or the empty line.
  Step ParseFieldLine(bool& end_of_head) {
    if (pos_ == end_) return Step::kNeedMore;
    const unsigned char first = data_[pos_];
    if (first == '\r') {
      const Step step = ConsumeCrLf();
      end_of_head = step == Step::kOk;
      return step;
    }
    if (first == '\n') return Fail(HttpError::kBareLf);
    // A line starting with whitespace continues the previous one (obs-fold, RFC 9112 §5.2) or,
    // on the first line, hides a field (§2.2): both are rejected.
    if (IsOws(first)) return Fail(HttpError::kObsFold);

    const size_t name_start = pos_;
    while (pos_ < end_ && IsTchar(data_[pos_])) ++pos_;
    if (pos_ == end_) return Step::kNeedMore;
    // RFC 9112 §5.1: whitespace between name and colon MUST be rejected with 400.
    if (IsOws(data_[pos_])) return Fail(HttpError::kWhitespaceBeforeColon);
    if (data_[pos_] != ':' || pos_ == name_start) return Fail(HttpError::kMalformedHeaderField);
    const absl::string_view name = View(name_start, pos_);
    ++pos_;

    while (pos_ < end_ && IsOws(data_[pos_])) ++pos_;
    const size_t value_start = pos_;
    while (pos_ < end_ && IsFieldValueChar(data_[pos_])) ++pos_;
    size_t value_end = pos_;
    while (value_end > value_start && IsOws(data_[value_end - 1])) --value_end;
    const Step step = ConsumeLineEnd(HttpError::kMalformedHeaderField);
    if (step != Step::kOk) return step;
    return ApplyField(name, View(value_start, value_end));
  }

  // Whether the field name `name` (tchar only, as ParseFieldLine takes it) is `lower`, a name
  // of lower-case letters and '-', in any case (RFC 9110 §5.1). Inline and without a library
  // call: every field of every request is matched against several names. Setting bit 5 maps
  // 'A'-'Z' to 'a'-'z' and no other tchar to a letter or '-'.
  static bool NameIs(absl::string_view name, absl::string_view lower) {
    if (name.size() != lower.size()) return false;
    for (size_t i = 0; i < name.size(); ++i) {
      if ((static_cast<unsigned char>(name[i]) | 0x20) != static_cast<unsigned char>(lower[i])) {
        return false;
      }
    }
    return true;
  }

  Step ApplyField(absl::string_view name, absl::string_view value) {
    if (NameIs(name, "content-length")) {
      // RFC 9112 §6.3: a list or repeated value is a smuggling vector; we accept exactly one.
      if (request_.has_content_length) return FailAfterLine(HttpError::kRepeatedContentLength);
      if (value.empty()) return FailAfterLine(HttpError::kInvalidContentLength);
      uint64_t length = 0;
      for (char c : value) {
        if (c < '0' || c > '9') return FailAfterLine(HttpError::kInvalidContentLength);
        length =
            std::min<uint64_t>(length * 10 + static_cast<uint64_t>(c - '0'), kContentLengthCap);
      }
      request_.has_content_length = true;
      content_length_ = length;
    } else if (NameIs(name, "transfer-encoding")) {
      has_transfer_encoding_ = true;
    } else if (NameIs(name, "host")) {
      if (++host_count_ > 1) return FailAfterLine(HttpError::kRepeatedHost);  // RFC 9112 §3.2
    } else if (NameIs(name, "content-type")) {
      if (request_.has_content_type) return FailAfterLine(HttpError::kRepeatedContentType);
      request_.has_content_type = true;
      request_.content_type = value;
    } else if (NameIs(name, "if-none-match")) {
      request_.has_if_none_match = true;
      request_.if_none_match = value;
    } else if (NameIs(name, "if-modified-since")) {
      request_.has_if_modified_since = true;
      request_.if_modified_since = value;
    } else if (NameIs(name, "range")) {
      request_.has_range = true;
      request_.range = value;
    } else if (NameIs(name, "if-range")) {
      request_.has_if_range = true;
      request_.if_range = value;
    } else if (NameIs(name, "expect")) {
      // RFC 9110 §10.1.1: "100-continue" is the only expectation defined, case-insensitive.
      if (absl::EqualsIgnoreCase(value, "100-continue")) request_.expect_continue = true;
    }
    return Step::kOk;
  }

  // Rules on the head as a whole, once it has ended.
  Step CheckHead() {
    // RFC 9112 §6.1: 501 for a transfer coding we do not implement (we implement none); with a
    // Content-Length as well it is a smuggling attempt (§6.3 ¶3), so 400.
    if (has_transfer_encoding_) {
      return FailAfterLine(request_.has_content_length ? HttpError::kTransferEncodingWithLength
                                                       : HttpError::kTransferEncoding);
    }
    if (request_.minor_version >= 1 && host_count_ == 0) {
      return FailAfterLine(HttpError::kMissingHost);
    }
    return Step::kOk;
  }

  absl::string_view View(size_t begin, size_t end) const {
    return absl::string_view(reinterpret_cast<const char*>(data_) + begin, end - begin);
  }

  const unsigned char* data_;
  const size_t end_;  // never look past max_header_bytes
  HttpRequest& request_;
  size_t pos_ = 0;
  bool in_request_line_ = true;
  bool has_transfer_encoding_ = false;
  int host_count_ = 0;
  uint64_t content_length_ = 0;
  HttpError error_ = HttpError::kNone;
  size_t error_at_ = 0;
};

HttpParseResult Error(HttpError error, size_t decided_at) {
  HttpParseResult result;
  result.status = HttpParseStatus::kError;
  result.error = error;
  result.consumed = decided_at;
  return result;
}

}  // namespace

HttpParseResult ParseHttpRequest(absl::string_view input, const HttpLimits& limits,
                                 HttpRequest& request) {
  request = HttpRequest{};
  HeadParser head(input, limits, request);
  switch (head.Parse()) {
    case Step::kError:
      return Error(head.error(), head.error_at());
    case Step::kNeedMore:
      // Out of bytes: if the input already reaches the limit, the head cannot fit.
      if (input.size() >= limits.max_header_bytes) {
        // Decided by the last byte the limit lets us look at.
        return Error(
            head.in_request_line() ? HttpError::kRequestLineTooLong : HttpError::kHeaderTooLarge,
            std::max<size_t>(limits.max_header_bytes, 1) - 1);
      }
      return HttpParseResult{};
    case Step::kOk:
      break;
  }
  // Decided by the head's last byte (its final LF): the body is left unread.
  if (head.content_length() > limits.max_body_bytes) {
    return Error(HttpError::kBodyTooLarge, head.head_size() - 1);
  }
  HttpParseResult result;
  result.head_bytes = head.head_size();
  const size_t total = head.head_size() + static_cast<size_t>(head.content_length());
  if (input.size() < total) return result;  // kIncomplete, the head known
  request.body = input.substr(head.head_size(), static_cast<size_t>(head.content_length()));
  result.status = HttpParseStatus::kComplete;
  result.consumed = total;
  return result;
}

int HttpErrorStatus(HttpError error) {
  switch (error) {
    case HttpError::kNone:
      return 200;
    case HttpError::kUnsupportedVersion:
      return 505;
    case HttpError::kRequestLineTooLong:
      return 414;
    case HttpError::kHeaderTooLarge:
      return 431;
    case HttpError::kTransferEncoding:
      return 501;
    case HttpError::kBodyTooLarge:
      return 413;
    case HttpError::kMalformedRequestLine:
    case HttpError::kBareCr:
    case HttpError::kBareLf:
    case HttpError::kObsFold:
    case HttpError::kWhitespaceBeforeColon:
    case HttpError::kMalformedHeaderField:
    case HttpError::kInvalidContentLength:
    case HttpError::kRepeatedContentLength:
    case HttpError::kTransferEncodingWithLength:
    case HttpError::kMissingHost:
    case HttpError::kRepeatedHost:
    case HttpError::kRepeatedContentType:
    case HttpError::kIncompleteRequest:
      return 400;
  }
  return 400;
}

absl::string_view HttpErrorText(HttpError error) {
  switch (error) {
    case HttpError::kNone:
      return "no error";
    case HttpError::kMalformedRequestLine:
      return "malformed request line";
    case HttpError::kUnsupportedVersion:
      return "HTTP version not supported";
    case HttpError::kRequestLineTooLong:
      return "request line too long";
    case HttpError::kHeaderTooLarge:
      return "request header fields too large";
    case HttpError::kBareCr:
      return "bare CR";
    case HttpError::kBareLf:
      return "bare LF line ending";
    case HttpError::kObsFold:
      return "obs-fold in header field";
    case HttpError::kWhitespaceBeforeColon:
      return "whitespace before colon in header field";
    case HttpError::kMalformedHeaderField:
      return "malformed header field";
    case HttpError::kInvalidContentLength:
      return "invalid Content-Length";
    case HttpError::kRepeatedContentLength:
      return "repeated Content-Length";
    case HttpError::kTransferEncodingWithLength:
      return "Transfer-Encoding with Content-Length";
    case HttpError::kTransferEncoding:
      return "Transfer-Encoding not implemented";
    case HttpError::kMissingHost:
      return "missing Host";
    case HttpError::kRepeatedHost:
      return "repeated Host";
    case HttpError::kRepeatedContentType:
      return "repeated Content-Type";
    case HttpError::kBodyTooLarge:
      return "request body too large";
    case HttpError::kIncompleteRequest:
      return "incomplete request";
  }
  return "bad request";
}

}  // namespace onepass::http
