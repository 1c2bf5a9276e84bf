// The counters of the RDAP handler, exported through HandlerFactory::Counters as
// onepass_rdap_requests_total{kind=...} and onepass_rdap_responses_total{status=...}.
#ifndef ONEPASS_HANDLERS_RDAP_RDAP_COUNTERS_H_
#define ONEPASS_HANDLERS_RDAP_RDAP_COUNTERS_H_

#include <cstddef>

#include "handlers/handler_counters.h"
#include "handlers/rdap/rdap_path.h"

namespace onepass::rdap {

// The counters in index order: the enum RdapCounter indexes the table kRdapCounters.
#define ONEPASS_RDAP_COUNTERS(COUNTER, GAUGE)                                                     \
  COUNTER(kRequestDomain, "rdap_requests", "kind", "domain", "/domain/NAME")                      \
  COUNTER(kRequestNameserver, "rdap_requests", "kind", "nameserver", "/nameserver/NAME")          \
  COUNTER(kRequestEntity, "rdap_requests", "kind", "entity", "/entity/HANDLE")                    \
  COUNTER(kRequestHelp, "rdap_requests", "kind", "help", "/help")                                 \
  COUNTER(kRequestSearch, "rdap_requests", "kind", "search", "/domains?name=PATTERN")             \
  COUNTER(kRequestOptions, "rdap_requests", "kind", "options",                                    \
          "OPTIONS: a browser's CORS preflight")                                                  \
  COUNTER(kRequestInvalid, "rdap_requests", "kind", "invalid",                                    \
          "not HTTP, not GET/HEAD/OPTIONS, or no RDAP query")                                     \
  COUNTER(kOk, "rdap_responses", "status", "200", "the object (or search results)")               \
  COUNTER(kNoContent, "rdap_responses", "status", "204", "OPTIONS answered with the CORS fields") \
  COUNTER(kNotModified, "rdap_responses", "status", "304", "If-None-Match matched the ETag")      \
  COUNTER(kBadRequest, "rdap_responses", "status", "400", "malformed HTTP or query")              \
  COUNTER(kNotFound, "rdap_responses", "status", "404", "no such object")                         \
  COUNTER(kMethodNotAllowed, "rdap_responses", "status", "405",                                   \
          "a method other than GET and HEAD")                                                     \
  COUNTER(kUnprocessable, "rdap_responses", "status", "422",                                      \
          "a search pattern this server does not run")                                            \
  COUNTER(kRateLimited, "rdap_responses", "status", "429",                                        \
          "refused: the client address is over --whois-rate-limit-qps (per worker)")              \
  COUNTER(kNotImplemented, "rdap_responses", "status", "501",                                     \
          "a query type or search this server does not offer")                                    \
  COUNTER(kOtherError, "rdap_responses", "status", "other",                                       \
          "other HTTP errors (413, 414, 431, 505)")                                               \
  COUNTER(kOutputFull, "rdap_responses", "status", "unsent",                                      \
          "the response did not fit the output buffer: closed")                                   \
  COUNTER(kRateLimitEvictions, "rdap_rate_limit_evictions", "", "",                               \
          "clients forgotten while still limited: --whois-rate-limit-clients is too small")
ONEPASS_HANDLER_COUNTERS(RdapCounter, kRdapCounters, ONEPASS_RDAP_COUNTERS)

inline RdapCounter RequestCounter(RdapQueryKind kind) {
  switch (kind) {
    case RdapQueryKind::kDomain:
      return RdapCounter::kRequestDomain;
    case RdapQueryKind::kNameserver:
      return RdapCounter::kRequestNameserver;
    case RdapQueryKind::kEntity:
      return RdapCounter::kRequestEntity;
    case RdapQueryKind::kHelp:
      return RdapCounter::kRequestHelp;
    case RdapQueryKind::kDomainSearch:
      return RdapCounter::kRequestSearch;
  }
  return RdapCounter::kRequestInvalid;
}

inline RdapCounter StatusCounter(int status) {
  switch (status) {
    case 200:
      return RdapCounter::kOk;
    case 204:
      return RdapCounter::kNoContent;
    case 304:
      return RdapCounter::kNotModified;
    case 400:
      return RdapCounter::kBadRequest;
    case 404:
      return RdapCounter::kNotFound;
    case 405:
      return RdapCounter::kMethodNotAllowed;
    case 422:
      return RdapCounter::kUnprocessable;
    case 429:
      return RdapCounter::kRateLimited;
    case 501:
      return RdapCounter::kNotImplemented;
    default:
      return RdapCounter::kOtherError;
  }
}

}  // namespace onepass::rdap

#endif  // ONEPASS_HANDLERS_RDAP_RDAP_COUNTERS_H_
