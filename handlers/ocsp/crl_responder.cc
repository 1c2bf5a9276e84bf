#include "handlers/ocsp/crl_responder.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "handlers/http/http_conditional.h"
#include "handlers/http/tail_writer.h"
#include "handlers/ocsp/ocsp_counters.h"

namespace onepass::ocsp {
namespace {

bool ParseUint(absl::string_view text, uint64_t* value) {
  if (text.empty() || text.size() > 19) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, value);
}

// RFC 9110 §13.2.2: If-None-Match when present, else If-Modified-Since (a valid date no earlier
// than thisUpdate).
bool NotModified(const http::HttpRequest& request, const CrlEntry& entry) {
  if (request.has_if_none_match) return http::IfNoneMatchMatches(request.if_none_match, entry.etag);
  if (!request.has_if_modified_since) return false;
  const absl::optional<absl::Time> since = http::ParseHttpDate(request.if_modified_since);
  return since.has_value() && absl::ToUnixSeconds(entry.this_update) <= absl::ToUnixSeconds(*since);
}

// RFC 9110 §13.1.5: the Range applies only if If-Range names this representation: its strong
// ETag, or its Last-Modified exactly (a strong validator: thisUpdate changes with every CRL).
bool IfRangeHolds(const http::HttpRequest& request, const CrlEntry& entry) {
  if (!request.has_if_range) return true;
  const absl::string_view tag = request.if_range;
  if (absl::StartsWith(tag, "\"")) return tag == absl::StrCat("\"", entry.etag, "\"");
  const absl::optional<absl::Time> date = http::ParseHttpDate(tag);
  return date.has_value() && absl::ToUnixSeconds(*date) == absl::ToUnixSeconds(entry.this_update);
}

}  // namespace

ByteRange ParseByteRange(absl::string_view field, uint64_t size) {
  ByteRange range;
  field = absl::StripAsciiWhitespace(field);
  if (!absl::ConsumePrefix(&field, "bytes=")) return range;  // another unit: ignored
  field = absl::StripAsciiWhitespace(field);
  if (field.find(',') != absl::string_view::npos) return range;  // several: served whole
  const size_t dash = field.find('-');
  if (dash == absl::string_view::npos) return range;
  const absl::string_view first_text = field.substr(0, dash);
  const absl::string_view last_text = field.substr(dash + 1);
  uint64_t first = 0, last = 0;
  if (first_text.empty()) {  // suffix-range: the last N bytes
    if (!ParseUint(last_text, &last)) return range;
    if (last == 0 || size == 0) return {ByteRange::Kind::kUnsatisfiable, 0, 0};
    return {ByteRange::Kind::kRange, last >= size ? 0 : size - last, size - 1};
  }
  if (!ParseUint(first_text, &first)) return range;
  if (last_text.empty()) {
    last = size == 0 ? 0 : size - 1;
  } else if (!ParseUint(last_text, &last) || last < first) {
    return range;  // invalid: ignored (§14.1.1)
  }
  if (first >= size) return {ByteRange::Kind::kUnsatisfiable, 0, 0};
  return {ByteRange::Kind::kRange, first, std::min(last, size - 1)};
}

CrlResponder::CrlResponder(std::shared_ptr<const CrlSnapshot> crls, HandlerCounters& counters)
    : crls_(std::move(crls)), counters_(counters) {}

int CrlResponder::Respond(const http::HttpRequest& request, absl::string_view name, absl::Time now,
                          OutputBuffer& out) {
  const CrlEntry* entry = crls_->Find(name);
  if (entry == nullptr) return 404;
  const bool head = request.method == "HEAD";
  const int64_t max_age =
      entry->next_update > now ? absl::ToInt64Seconds(entry->next_update - now) : 0;
  const uint64_t size = entry->der.size();
  int status = 200;
  ByteRange range;
  if (NotModified(request, *entry)) {
    status = 304;
  } else if (request.has_range && IfRangeHolds(request, *entry)) {
    range = ParseByteRange(request.range, size);
    if (range.kind == ByteRange::Kind::kRange) status = 206;
    if (range.kind == ByteRange::Kind::kUnsatisfiable) status = 416;
  }
  head_.clear();
  switch (status) {
    case 200:
      absl::StrAppend(&head_, "HTTP/1.1 200 OK\r\nContent-Length: ", size, "\r\n");
      break;
    case 206:
      absl::StrAppend(
          &head_, "HTTP/1.1 206 Partial Content\r\nContent-Length: ", range.last - range.first + 1,
          "\r\nContent-Range: bytes ", range.first, "-", range.last, "/", size, "\r\n");
      break;
    case 304:
      head_.append("HTTP/1.1 304 Not Modified\r\n");
      break;
    default:  // 416 (RFC 9110 §15.5.17): the current length, no content
      absl::StrAppend(&head_,
                      "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Length: 0\r\n"
                      "Content-Range: bytes */",
                      size, "\r\n");
      break;
  }
  if (status != 416) {
    if (status != 304) {
      absl::StrAppend(&head_,
                      "Content-Type: application/pkix-crl\r\nLast-Modified: ", entry->last_modified,
                      "\r\nAccept-Ranges: bytes\r\n");
    }
    absl::StrAppend(&head_, "Expires: ", entry->expires, "\r\nETag: \"", entry->etag,
                    "\"\r\nCache-Control: public, max-age=", max_age, "\r\n");
  }
  absl::StrAppend(&head_, "Connection: close\r\nDate: ", date_cache_.Get(now), "\r\n\r\n");
  absl::string_view body;
  if (!head && status == 200) body = entry->der;
  if (!head && status == 206) body = entry->der.substr(range.first, range.last - range.first + 1);
  const bool attach = body.size() > kCrlCopiedBodyMax;
  if (attach && out.available() < head_.size()) return -1;
  http::TailWriter writer(out);
  writer.Add(head_);
  if (!attach && !body.empty()) writer.Add(body);
  if (!writer.Commit()) return -1;
  if (attach) {
    SharedBody shared;
    shared.bytes = absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    shared.file = entry->sealed->fd();
    shared.file_offset = static_cast<uint64_t>(body.data() - entry->der.data());
    shared.owner = crls_;  // the snapshot outlives a reload until this body is sent
    if (!out.AttachBody(std::move(shared))) return -1;  // cannot happen: checked above
  }
  Count(counters_, status == 200   ? OcspCounter::kCrlFull
                   : status == 206 ? OcspCounter::kCrlPartial
                   : status == 304 ? OcspCounter::kCrlNotModified
                                   : OcspCounter::kCrlUnsatisfiable);
  return 0;
}

}  // namespace onepass::ocsp
