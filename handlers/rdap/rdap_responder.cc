#include "handlers/rdap/rdap_responder.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "handlers/http/http_conditional.h"
#include "handlers/http/reason_phrase.h"
#include "handlers/http/tail_writer.h"
#include "handlers/rdap/rdap_counters.h"

namespace onepass::rdap {
namespace {

// Room for the head beyond the content: status line, fields, a 16-hex ETag, Date.
constexpr size_t kMaxHeadBytes = 512;
// An error body: the conformance, code, title and a reason of at most a few hundred bytes.
constexpr size_t kMaxErrorBytes = 1024;
// A search answer's frame around its results: "domainSearchResults" and the commas.
constexpr size_t kSearchFrameBytes = 64;
// The methods RDAP answers (RFC 7480 §4.1, and OPTIONS for CORS), for Allow (RFC 9110 §10.2.1)
// and Access-Control-Allow-Methods.
constexpr absl::string_view kMethods = "GET, HEAD, OPTIONS";

// The quoted entity-tag of `etag`: 16 lower-case hex digits in quotes, written into `buffer`
// (no allocation on the request path).
absl::string_view QuotedEtag(uint64_t etag, char (&buffer)[18]) {
  static constexpr char kHex[] = "0123456789abcdef";
  buffer[0] = '"';
  for (int i = 0; i < 16; ++i) buffer[1 + i] = kHex[(etag >> (60 - 4 * i)) & 15];
  buffer[17] = '"';
  return absl::string_view(buffer, sizeof(buffer));
}

}  // namespace

size_t MaxResponseBytes(const RdapSnapshot& snapshot, const RdapConfig& config) {
  const RdapSnapshotStats& stats = snapshot.stats();
  const size_t search = kSearchFrameBytes + snapshot.top().size() +
                        snapshot.search_bottom(true).size() +
                        config.search_max_results * (stats.max_domain_bytes + 1);
  return kMaxHeadBytes + std::max({stats.max_body_bytes, kMaxErrorBytes, search});
}

RdapResponder::RdapResponder(std::shared_ptr<const RdapSnapshot> snapshot, const RdapConfig& config,
                             HandlerCounters& counters)
    : snapshot_(std::move(snapshot)),
      config_(config),
      counters_(counters),
      cache_control_(absl::StrCat("public, max-age=", config.cache_max_age_s)),
      cache_control_tail_(absl::StrCat("\r\nCache-Control: ", cache_control_, "\r\n\r\n")),
      retry_after_s_(config.rate_limit.queries_per_second > 0
                         ? static_cast<int>(std::ceil(1.0 / config.rate_limit.queries_per_second))
                         : 1) {
  search_ids_.reserve(config.search_max_results);
}

void RdapResponder::Head(int status, size_t content_length, absl::Time now, std::string* head) {
  head->clear();
  absl::StrAppend(head, "HTTP/1.1 ", status, " ", http::HttpReasonPhrase(status),
                  "\r\nContent-Type: application/rdap+json\r\nContent-Length: ", content_length,
                  "\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\nDate: ",
                  date_cache_.Get(now), "\r\n");
}

bool RdapResponder::Answer(const RdapAnswer& answer, bool etag, const http::HttpRequest& request,
                           absl::Time now, OutputBuffer& out) {
  char etag_buffer[18];
  const absl::string_view etag_text = etag ? QuotedEtag(answer.etag, etag_buffer) : "";
  // RFC 9110 §13.1.2: a GET or HEAD whose If-None-Match matches gets 304, with the ETag and
  // Cache-Control a 200 would carry (§15.4.5).
  const bool not_modified =
      etag && request.has_if_none_match &&
      http::IfNoneMatchMatches(request.if_none_match, etag_text.substr(1, etag_text.size() - 2));
  const int status = not_modified ? 304 : 200;
  // The head is written straight into `out` from constant pieces (the same bytes Head() would
  // give): the answer path builds no string and formats no number but the length.
  http::TailWriter writer(out);
  if (not_modified) {
    writer.Add(
        "HTTP/1.1 304 Not Modified\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n"
        "Date: ");
  } else {
    writer.Add("HTTP/1.1 200 OK\r\nContent-Type: application/rdap+json\r\nContent-Length: ");
    writer.AddDecimal(answer.size());
    writer.Add("\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\nDate: ");
  }
  writer.Add(date_cache_.Get(now));
  if (etag) {
    writer.Add("\r\nETag: ");
    writer.Add(etag_text);
  }
  writer.Add(cache_control_tail_);
  if (!not_modified && request.method == "GET") {
    for (int i = 0; i < answer.count; ++i) writer.Add(answer.pieces[i]);
  }
  if (!writer.Commit()) return false;
  Count(counters_, StatusCounter(status));
  return true;
}

bool RdapResponder::Search(const RdapQuery& query, Body body, absl::Time now, OutputBuffer& out) {
  const RdapSnapshot& s = *snapshot_;
  const bool truncated =
      s.SearchDomains(query.key, !query.prefix, config_.search_max_results, &search_ids_);
  // RFC 9083 §8: {"rdapConformance", "domainSearchResults": [domains...], "notices"}.
  constexpr absl::string_view kOpen = "\"domainSearchResults\":[";
  size_t length = s.top().size() + kOpen.size() + 1 + s.search_bottom(truncated).size();
  RdapAnswer results[1];
  for (size_t i = 0; i < search_ids_.size(); ++i) {
    results[0] = RdapAnswer();
    s.SearchResult(search_ids_[i], &results[0]);
    length += results[0].size() + 2 + (i > 0 ? 1 : 0);
  }
  Head(200, length, now, &head_);
  absl::StrAppend(&head_, "Cache-Control: ", cache_control_, "\r\n\r\n");
  http::TailWriter writer(out);
  writer.Add(head_);
  if (body == Body::kSend) {
    writer.Add(s.top());
    writer.Add(kOpen);
    for (size_t i = 0; i < search_ids_.size(); ++i) {
      results[0] = RdapAnswer();
      s.SearchResult(search_ids_[i], &results[0]);
      writer.Add(i > 0 ? ",{" : "{");
      for (int p = 0; p < results[0].count; ++p) writer.Add(results[0].pieces[p]);
      writer.Add("}");
    }
    writer.Add("]");
    writer.Add(s.search_bottom(truncated));
  }
  if (!writer.Commit()) return false;
  Count(counters_, RdapCounter::kOk);
  return true;
}

bool RdapResponder::Error(int status, absl::string_view reason, Body body, absl::Time now,
                          OutputBuffer& out) {
  body_.clear();
  RenderError(status, http::HttpReasonPhrase(status), reason, &body_);
  Head(status, body_.size(), now, &head_);
  if (status == 405) absl::StrAppend(&head_, "Allow: ", kMethods, "\r\n");  // RFC 9110 §15.5.6
  if (status == 429) absl::StrAppend(&head_, "Retry-After: ", retry_after_s_, "\r\n");
  head_.append("Cache-Control: no-store\r\n\r\n");
  http::TailWriter writer(out);
  writer.Add(head_);
  if (body == Body::kSend) writer.Add(body_);
  if (!writer.Commit()) return false;
  Count(counters_, StatusCounter(status));
  return true;
}

bool RdapResponder::RespondHttpError(http::HttpError error, absl::Time now, OutputBuffer& out) {
  Count(counters_, RdapCounter::kRequestInvalid);
  return Error(http::HttpErrorStatus(error), http::HttpErrorText(error), Body::kSend, now, out);
}

bool RdapResponder::RespondRateLimited(absl::Time now, OutputBuffer& out) {
  return Error(429, "query rate limit exceeded for your address; retry later", Body::kSend, now,
               out);
}

// A browser asks before a cross-origin GET that carries a header outside the CORS-safelisted
// ones (If-None-Match, say): OPTIONS with Origin and Access-Control-Request-Method (Fetch
// standard, CORS protocol). RFC 7480 §5.6 has RDAP allow every origin; the same answer goes
// to every path (the policy is the server's, and a lookup that will be 404 is still asked)
// and to a plain OPTIONS (RFC 9110 §9.3.7: Allow says what the target supports). 204: no
// content, no Content-Length (RFC 9110 §8.6).
bool RdapResponder::Preflight(absl::Time now, OutputBuffer& out) {
  http::TailWriter writer(out);
  writer.Add(
      "HTTP/1.1 204 No Content\r\nAccess-Control-Allow-Origin: *\r\n"
      "Access-Control-Allow-Methods: ");
  writer.Add(kMethods);
  // The request fields the answers heed beyond the safelisted ones: If-None-Match (304).
  // Max-Age: a day (Firefox's cap; Chromium keeps two hours), so one preflight serves many.
  writer.Add(
      "\r\nAccess-Control-Allow-Headers: Accept, If-None-Match\r\n"
      "Access-Control-Max-Age: 86400\r\nAllow: ");
  writer.Add(kMethods);
  writer.Add("\r\nConnection: close\r\nDate: ");
  writer.Add(date_cache_.Get(now));
  writer.Add("\r\n\r\n");
  if (!writer.Commit()) return false;
  Count(counters_, StatusCounter(204));
  return true;
}

bool RdapResponder::Respond(const http::HttpRequest& request, absl::Time now, OutputBuffer& out) {
  // RFC 9110 §9.1: methods are case-sensitive. RDAP is GET and HEAD (RFC 7480 §4.1), and
  // OPTIONS for a browser's CORS preflight.
  if (request.method == "OPTIONS") {
    Count(counters_, RdapCounter::kRequestOptions);
    return Preflight(now, out);
  }
  if (request.method != "GET" && request.method != "HEAD") {
    Count(counters_, RdapCounter::kRequestInvalid);
    return Error(405, "RDAP answers GET and HEAD (RFC 7480 §4.1), and OPTIONS", Body::kSend, now,
                 out);
  }
  const Body body = request.method == "GET" ? Body::kSend : Body::kOmit;
  const RdapPathResult parsed = ParseRdapTarget(request.target, config_.path, &scratch_);
  if (parsed.status != 0) {
    Count(counters_, RdapCounter::kRequestInvalid);
    return Error(parsed.status, parsed.reason, body, now, out);
  }
  Count(counters_, RequestCounter(parsed.query.kind));
  const RdapSnapshot& s = *snapshot_;
  RdapAnswer answer;
  switch (parsed.query.kind) {
    case RdapQueryKind::kDomain:
      if (!s.FindDomain(parsed.query.key, &answer)) {
        return Error(404, "no such domain in this registry", body, now, out);
      }
      break;
    case RdapQueryKind::kNameserver:
      if (!s.FindNameserver(parsed.query.key, &answer)) {
        return Error(404, "no such name server in this registry", body, now, out);
      }
      break;
    case RdapQueryKind::kEntity:
      if (!s.FindEntity(parsed.query.key, &answer)) {
        return Error(404, "no such entity in this registry", body, now, out);
      }
      break;
    case RdapQueryKind::kHelp:
      s.Help(&answer);
      break;
    case RdapQueryKind::kDomainSearch:
      return Search(parsed.query, body, now, out);
  }
  return Answer(answer, /*etag=*/true, request, now, out);
}

}  // namespace onepass::rdap
