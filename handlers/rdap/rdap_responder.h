// The RDAP responder: one parsed HTTP request -> the whole HTTP response (RFC 7480).
//
//   GET/HEAD /domain/NAME ...       200 application/rdap+json, ETag, Cache-Control,
//                                   Access-Control-Allow-Origin: * (RFC 7480 §5.6)
//   If-None-Match with that ETag    304 (RFC 9110 §13.1.2)
//   no such object                  404 with an RDAP error body (RFC 9083 §6)
//   malformed query                 400; unsupported search pattern 422; query type 501
//   OPTIONS (a CORS preflight)      204 with Access-Control-Allow-Methods/-Headers/-Max-Age
//   other methods                   405, Allow: GET, HEAD, OPTIONS
//   over the client's rate          429 with Retry-After (RFC 7480 §5.5), from the handler
// Every response says Connection: close (one request per connection, as OCSP and Whois) and
// carries Date. Per worker: it holds scratch buffers and the Date cache; no per-request state.
#ifndef ONEPASS_HANDLERS_RDAP_RDAP_RESPONDER_H_
#define ONEPASS_HANDLERS_RDAP_RDAP_RESPONDER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "handlers/handler_counters.h"
#include "handlers/http/http_date.h"
#include "handlers/http/http_request_parser.h"
#include "handlers/output_buffer.h"
#include "handlers/rdap/rdap_path.h"
#include "handlers/rdap/rdap_snapshot.h"
#include "handlers/whois/whois_rate_limiter.h"

namespace onepass::rdap {

struct RdapConfig {
  http::HttpLimits http{4096, 0};  // GET and HEAD carry no content
  RdapPathConfig path;
  std::string base_url = "http://localhost/";
  // Domain search results per answer at most (--rdap-search-max-results); 0: no search.
  size_t search_max_results = 10;
  // Cache-Control max-age of answers [s] (RFC 7480 §5.6 lets clients cache; 9111 §5.2.2.1).
  int cache_max_age_s = 300;
  // The Whois rate limit, shared with --handler whois (the same data, the same scrapers).
  whois::WhoisRateLimitConfig rate_limit;
};

// The largest response the responder writes for `snapshot` under `config`.
size_t MaxResponseBytes(const RdapSnapshot& snapshot, const RdapConfig& config);

class RdapResponder {
 public:
  RdapResponder(std::shared_ptr<const RdapSnapshot> snapshot, const RdapConfig& config,
                HandlerCounters& counters);

  // Appends the response to `request`; false (nothing appended) when it does not fit.
  bool Respond(const http::HttpRequest& request, absl::Time now, OutputBuffer& out);
  // An HTTP-level error (the parser's), with an RDAP error body.
  bool RespondHttpError(http::HttpError error, absl::Time now, OutputBuffer& out);
  // 429 Too Many Requests with Retry-After (the client's rate interval, rounded up).
  bool RespondRateLimited(absl::Time now, OutputBuffer& out);

 private:
  enum class Body { kSend, kOmit };
  bool Answer(const RdapAnswer& answer, bool etag, const http::HttpRequest& request, absl::Time now,
              OutputBuffer& out);
  bool Search(const RdapQuery& query, Body body, absl::Time now, OutputBuffer& out);
  bool Error(int status, absl::string_view reason, Body body, absl::Time now, OutputBuffer& out);
  bool Preflight(absl::Time now, OutputBuffer& out);
  void Head(int status, size_t content_length, absl::Time now, std::string* head);

  const std::shared_ptr<const RdapSnapshot> snapshot_;
  const RdapConfig config_;
  HandlerCounters& counters_;
  const std::string cache_control_;
  const std::string cache_control_tail_;  // from the end of Date to the end of the head
  const int retry_after_s_;
  http::HttpDateCache date_cache_;
  RdapScratch scratch_;
  std::string head_;
  std::string body_;
  std::vector<uint32_t> search_ids_;
};

}  // namespace onepass::rdap

#endif  // ONEPASS_HANDLERS_RDAP_RDAP_RESPONDER_H_
