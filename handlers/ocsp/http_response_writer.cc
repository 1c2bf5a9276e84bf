#include "handlers/ocsp/http_response_writer.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "handlers/http/reason_phrase.h"
#include "handlers/http/tail_writer.h"

namespace onepass::ocsp {
namespace {

using http::TailWriter;

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
      body_size, "\r\nLast-Modified: ", http::HttpDate(this_update), "\r\n");
  if (next_update.has_value())
    absl::StrAppend(&head, "Expires: ", http::HttpDate(*next_update), "\r\n");
  absl::StrAppend(&head, "ETag: \"", etag, "\"\r\nConnection: close\r\n");
  return head;
}

std::string BuildNotModifiedHeadPrefix(absl::optional<absl::Time> next_update,
                                       absl::string_view etag) {
  std::string head = "HTTP/1.1 304 Not Modified\r\n";
  if (next_update.has_value())
    absl::StrAppend(&head, "Expires: ", http::HttpDate(*next_update), "\r\n");
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
                                         OutputBuffer& out, HttpBody send_body,
                                         absl::string_view allow) {
  const absl::string_view reason = http::HttpReasonPhrase(status);
  TailWriter writer(out);
  writer.Add("HTTP/1.1 ");
  writer.AddDecimal(static_cast<uint64_t>(status));
  writer.Add(" ");
  writer.Add(reason);
  writer.Add("\r\nContent-Type: text/plain\r\nContent-Length: ");
  // Body: "<status> <reason>: <detail>\n"
  writer.AddDecimal(3 + 1 + reason.size() + 2 + detail.size() + 1);
  writer.Add("\r\nConnection: close\r\n");
  if (status == 405) {
    writer.Add("Allow: ");
    writer.Add(allow);
    writer.Add("\r\n");
  }
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

}  // namespace onepass::ocsp
