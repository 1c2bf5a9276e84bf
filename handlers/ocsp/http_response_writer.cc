#include "handlers/ocsp/http_response_writer.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onepass::ocsp {
namespace {

// Writes pieces into an OutputBuffer's free tail; commits only if all of them fit.
class TailWriter {
 public:
  explicit TailWriter(OutputBuffer& out) : out_(out), tail_(out.WritableTail()) {}

  void Add(absl::string_view piece) {
    if (!fits_ || piece.size() > tail_.size() - size_) {
      fits_ = false;
      return;
    }
    std::memcpy(tail_.data() + size_, piece.data(), piece.size());
    size_ += piece.size();
  }

  void AddDecimal(uint64_t value) {
    char digits[20];
    size_t n = 0;
    do {
      digits[sizeof(digits) - ++n] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    Add(absl::string_view(digits + sizeof(digits) - n, n));
  }

  bool Commit() {
    if (fits_) out_.Commit(size_);
    return fits_;
  }

 private:
  OutputBuffer& out_;
  absl::Span<uint8_t> tail_;
  size_t size_ = 0;
  bool fits_ = true;
};

absl::string_view AsText(absl::Span<const uint8_t> bytes) {
  return absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Date, then the Cache-Control of a pre-signed response (RFC 5019 §6.2), ending the head.
void AddDateAndCaching(absl::string_view date, absl::optional<absl::Time> next_update,
                       absl::Time now, TailWriter& writer) {
  int64_t max_age = 0;
  if (next_update.has_value() && *next_update > now) {
    max_age = absl::ToInt64Seconds(*next_update - now);
  }
  writer.Add("Date: ");
  writer.Add(date);
  writer.Add("\r\nCache-Control: max-age=");
  writer.AddDecimal(static_cast<uint64_t>(max_age));
  writer.Add(", public, no-transform, must-revalidate\r\n\r\n");
}

}  // namespace

std::string BuildPresignedHeadPrefix(size_t body_size, absl::Time this_update,
                                     absl::optional<absl::Time> next_update,
                                     absl::string_view etag) {
  std::string head = absl::StrCat(
      "HTTP/1.1 200 OK\r\n"
      "Content-Type: application/ocsp-response\r\n"
      "Content-Length: ",
      body_size, "\r\nLast-Modified: ", HttpDate(this_update), "\r\n");
  if (next_update.has_value()) absl::StrAppend(&head, "Expires: ", HttpDate(*next_update), "\r\n");
  absl::StrAppend(&head, "ETag: \"", etag, "\"\r\nConnection: close\r\n");
  return head;
}

std::string BuildNotModifiedHeadPrefix(absl::optional<absl::Time> next_update,
                                       absl::string_view etag) {
  std::string head = "HTTP/1.1 304 Not Modified\r\n";
  if (next_update.has_value()) absl::StrAppend(&head, "Expires: ", HttpDate(*next_update), "\r\n");
  absl::StrAppend(&head, "ETag: \"", etag, "\"\r\nConnection: close\r\n");
  return head;
}

bool HttpResponseWriter::AppendPresigned(absl::string_view head_prefix, absl::string_view body,
                                         absl::optional<absl::Time> next_update, absl::Time now,
                                         OutputBuffer& out, HttpBody send_body) {
  TailWriter writer(out);
  writer.Add(head_prefix);
  AddDateAndCaching(date_cache_.Get(now), next_update, now, writer);
  if (send_body == HttpBody::kSend) writer.Add(body);
  return writer.Commit();
}

bool HttpResponseWriter::AppendNotModified(absl::string_view head_prefix,
                                           absl::optional<absl::Time> next_update, absl::Time now,
                                           OutputBuffer& out) {
  TailWriter writer(out);
  writer.Add(head_prefix);
  AddDateAndCaching(date_cache_.Get(now), next_update, now, writer);
  return writer.Commit();
}

bool HttpResponseWriter::AppendOcspStatus(OcspResponseStatus status, absl::Time now,
                                          OutputBuffer& out, HttpBody send_body) {
  // OCSPResponse ::= SEQUENCE { responseStatus ENUMERATED } (responseBytes absent).
  const uint8_t body[] = {0x30, 0x03, 0x0A, 0x01, static_cast<uint8_t>(status)};
  TailWriter writer(out);
  writer.Add(
      "HTTP/1.1 200 OK\r\n"
      "Content-Type: application/ocsp-response\r\n"
      "Content-Length: 5\r\n"
      "Cache-Control: no-store\r\n"
      "Connection: close\r\n"
      "Date: ");
  writer.Add(date_cache_.Get(now));
  writer.Add("\r\n\r\n");
  if (send_body == HttpBody::kSend) writer.Add(AsText(body));
  return writer.Commit();
}

bool HttpResponseWriter::AppendHttpError(int status, absl::string_view detail, absl::Time now,
                                         OutputBuffer& out, HttpBody send_body) {
  const absl::string_view reason = HttpReasonPhrase(status);
  TailWriter writer(out);
  writer.Add("HTTP/1.1 ");
  writer.AddDecimal(static_cast<uint64_t>(status));
  writer.Add(" ");
  writer.Add(reason);
  writer.Add("\r\nContent-Type: text/plain\r\nContent-Length: ");
  // Body: "<status> <reason>: <detail>\n"
  writer.AddDecimal(3 + 1 + reason.size() + 2 + detail.size() + 1);
  writer.Add("\r\nConnection: close\r\n");
  if (status == 405) writer.Add("Allow: GET, HEAD, POST\r\n");
  writer.Add("Date: ");
  writer.Add(date_cache_.Get(now));
  writer.Add("\r\n\r\n");
  if (send_body == HttpBody::kOmit) return writer.Commit();
  writer.AddDecimal(static_cast<uint64_t>(status));
  writer.Add(" ");
  writer.Add(reason);
  writer.Add(": ");
  writer.Add(detail);
  writer.Add("\n");
  return writer.Commit();
}

absl::string_view HttpReasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Error";
  }
}

}  // namespace onepass::ocsp
