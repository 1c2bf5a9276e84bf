// The Whois handler's counters (HandlerFactory::Counters): queries by kind, and replies by
// outcome (an object found, "No match", an error reply, a reply too large for the buffer).
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_COUNTERS_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_COUNTERS_H_

#include <cstddef>
#include <iterator>

#include "handlers/handler_counters.h"
#include "handlers/whois/whois_query.h"

namespace onepass::whois {

// Indexes into kWhoisCounters.
enum class WhoisCounter : size_t {
  kQueryAny,
  kQueryDomain,
  kQueryNameserver,
  kQueryRegistrar,
  kQueryContact,
  kMatch,
  kNoMatch,
  kError,
  kTooLarge,
  kRateLimited,
  kRateLimitEvictions,
  kCount,
};

inline constexpr CounterSpec kWhoisCounters[] = {
    {"whois_queries", "kind", "any", "bare names: domain, else name server, else contact"},
    {"whois_queries", "kind", "domain", "domain NAME"},
    {"whois_queries", "kind", "nameserver", "nameserver NAME"},
    {"whois_queries", "kind", "registrar", "registrar NAME or IANA ID"},
    {"whois_queries", "kind", "contact", "contact or entity HANDLE"},
    {"whois_replies", "result", "match", "the object's record"},
    {"whois_replies", "result", "no_match", "No match for the query"},
    {"whois_replies", "result", "error", "the query could not be framed or parsed"},
    {"whois_replies", "result", "too_large", "the reply did not fit the output buffer"},
    {"whois_replies", "result", "rate_limited",
     "refused: the client address is over --whois-rate-limit-qps (per worker)"},
    {"whois_rate_limit_evictions", "", "",
     "clients forgotten while still limited: --whois-rate-limit-clients is too small"},
};
static_assert(std::size(kWhoisCounters) == static_cast<size_t>(WhoisCounter::kCount));

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

inline void Count(HandlerCounters& counters, WhoisCounter counter) {
  counters.Add(static_cast<size_t>(counter));
}

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_COUNTERS_H_
