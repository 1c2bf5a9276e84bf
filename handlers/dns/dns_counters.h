// The DNS handler's counters (HandlerFactory::Counters): responses by RCODE (RFC 1035 §4.1.1,
// RFC 6891 §9), by what the answer is (answer_plan.h decides it), wildcard expansions, DO
// queries and answers served from precompiled_answers.h. Counted from what the responder
// already knows (Response), never by reading the output back.
#ifndef ONEPASS_HANDLERS_DNS_DNS_COUNTERS_H_
#define ONEPASS_HANDLERS_DNS_DNS_COUNTERS_H_

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "handlers/dns/answer_plan.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/handler_counters.h"

namespace onepass::dns {

// Indexes into kDnsCounters.
enum class DnsCounter : size_t {
  kNoError,
  kFormErr,
  kServFail,
  kNxDomain,
  kNotImp,
  kRefused,
  kNotAuth,
  kBadVers,
  kRcodeOther,
  kKindAnswer,
  kKindCname,
  kKindReferral,
  kKindNodata,
  kKindNxdomain,
  kKindRefused,
  kWildcard,
  kDnssecOk,
  kPrecompiled,
  kCount,
};

inline constexpr CounterSpec kDnsCounters[] = {
    {"dns_responses", "rcode", "NOERROR", "responses with RCODE 0"},
    {"dns_responses", "rcode", "FORMERR", "malformed queries"},
    {"dns_responses", "rcode", "SERVFAIL", "no answer possible (an NSEC3 hash collision)"},
    {"dns_responses", "rcode", "NXDOMAIN", "the name does not exist"},
    {"dns_responses", "rcode", "NOTIMP", "an opcode other than QUERY"},
    {"dns_responses", "rcode", "REFUSED", "not authoritative, other class, or AXFR/IXFR"},
    {"dns_responses", "rcode", "NOTAUTH", "NOTIFY or UPDATE for a zone we serve"},
    {"dns_responses", "rcode", "BADVERS", "an EDNS version other than 0"},
    {"dns_responses", "rcode", "other", "any other RCODE"},
    {"dns_answers", "kind", "answer", "the data asked for"},
    {"dns_answers", "kind", "cname", "a CNAME chain was followed (whatever its end)"},
    {"dns_answers", "kind", "referral", "a delegation below a zone cut"},
    {"dns_answers", "kind", "nodata", "the name exists without the type"},
    {"dns_answers", "kind", "nxdomain", "the name does not exist"},
    {"dns_answers", "kind", "refused", "a name in no zone we serve"},
    {"dns_wildcard", "", "", "answers synthesized from a wildcard (RFC 4592)"},
    {"dns_dnssec_ok", "", "", "responses to queries with the DO bit (RFC 3225)"},
    {"dns_precompiled", "", "", "responses copied from precompiled answers"},
};
static_assert(std::size(kDnsCounters) == static_cast<size_t>(DnsCounter::kCount));

inline DnsCounter RcodeCounter(uint16_t rcode) {
  switch (rcode) {
    case kRcodeNoError:
      return DnsCounter::kNoError;
    case kRcodeFormErr:
      return DnsCounter::kFormErr;
    case kRcodeServFail:
      return DnsCounter::kServFail;
    case kRcodeNxDomain:
      return DnsCounter::kNxDomain;
    case kRcodeNotImp:
      return DnsCounter::kNotImp;
    case kRcodeRefused:
      return DnsCounter::kRefused;
    case kRcodeNotAuth:
      return DnsCounter::kNotAuth;
    case kRcodeBadVers:
      return DnsCounter::kBadVers;
    default:
      return DnsCounter::kRcodeOther;
  }
}

inline DnsCounter KindCounter(AnswerKind kind) {
  switch (kind) {
    case AnswerKind::kAnswer:
      return DnsCounter::kKindAnswer;
    case AnswerKind::kCname:
      return DnsCounter::kKindCname;
    case AnswerKind::kReferral:
      return DnsCounter::kKindReferral;
    case AnswerKind::kNodata:
      return DnsCounter::kKindNodata;
    case AnswerKind::kNxdomain:
      return DnsCounter::kKindNxdomain;
    case AnswerKind::kRefused:
      return DnsCounter::kKindRefused;
    case AnswerKind::kNone:
      break;
  }
  return DnsCounter::kCount;
}

inline void Count(HandlerCounters& counters, DnsCounter counter) {
  counters.Add(static_cast<size_t>(counter));
}

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_COUNTERS_H_
