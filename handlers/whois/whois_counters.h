// The Whois handler's counters (HandlerFactory::Counters): queries by kind, and replies by
// outcome (an object found, "No match", an error reply, a reply too large for the buffer).
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_COUNTERS_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_COUNTERS_H_

#include <cstddef>

#include "handlers/handler_counters.h"
#include "handlers/whois/whois_query.h"

namespace onepass::whois {

// The counters in index order: the enum WhoisCounter indexes the table kWhoisCounters.
#define ONEPASS_WHOIS_COUNTERS(COUNTER, GAUGE)                                                   \
  COUNTER(kQueryAny, "whois_queries", "kind", "any",                                             \
          "bare names: domain, else name server, else contact")                                  \
  COUNTER(kQueryDomain, "whois_queries", "kind", "domain", "domain NAME")                        \
  COUNTER(kQueryNameserver, "whois_queries", "kind", "nameserver", "nameserver NAME")            \
  COUNTER(kQueryRegistrar, "whois_queries", "kind", "registrar", "registrar NAME or IANA ID")    \
  COUNTER(kQueryContact, "whois_queries", "kind", "contact", "contact or entity HANDLE")         \
  COUNTER(kMatch, "whois_replies", "result", "match", "the object's record")                     \
  COUNTER(kNoMatch, "whois_replies", "result", "no_match", "No match for the query")             \
  COUNTER(kError, "whois_replies", "result", "error", "the query could not be framed or parsed") \
  COUNTER(kTooLarge, "whois_replies", "result", "too_large",                                     \
          "the reply did not fit the output buffer")                                             \
  COUNTER(kRateLimited, "whois_replies", "result", "rate_limited",                               \
          "refused: the client address is over --whois-rate-limit-qps (per worker)")             \
  COUNTER(kRateLimitEvictions, "whois_rate_limit_evictions", "", "",                             \
          "clients forgotten while still limited: --whois-rate-limit-clients is too small")
ONEPASS_HANDLER_COUNTERS(WhoisCounter, kWhoisCounters, ONEPASS_WHOIS_COUNTERS)

inline WhoisCounter QueryCounter(QueryKind kind) {
  switch (kind) {
    case QueryKind::kAny:
      return WhoisCounter::kQueryAny;
    case QueryKind::kDomain:
      return WhoisCounter::kQueryDomain;
    case QueryKind::kNameserver:
      return WhoisCounter::kQueryNameserver;
    case QueryKind::kRegistrar:
      return WhoisCounter::kQueryRegistrar;
    case QueryKind::kContact:
      return WhoisCounter::kQueryContact;
  }
  return WhoisCounter::kQueryAny;
}

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_COUNTERS_H_
