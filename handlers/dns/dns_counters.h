// The DNS handler's counters (HandlerFactory::Counters): responses by RCODE (RFC 1035 §4.1.1,
// RFC 6891 §9), by what the answer is (answer_plan.h decides it), wildcard expansions, DO
// queries and answers served from precompiled_answers.h. Counted from what the responder
// already knows (Response), never by reading the output back.
#ifndef ONEPASS_HANDLERS_DNS_DNS_COUNTERS_H_
#define ONEPASS_HANDLERS_DNS_DNS_COUNTERS_H_

#include <cstddef>
#include <cstdint>

#include "handlers/dns/answer_plan.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/handler_counters.h"

namespace onepass::dns {

// The counters in index order: the enum DnsCounter indexes the table kDnsCounters.
#define ONEPASS_DNS_COUNTERS(COUNTER, GAUGE)                                                     \
  COUNTER(kNoError, "dns_responses", "rcode", "NOERROR", "responses with RCODE 0")               \
  COUNTER(kFormErr, "dns_responses", "rcode", "FORMERR", "malformed queries")                    \
  COUNTER(kServFail, "dns_responses", "rcode", "SERVFAIL",                                       \
          "no answer possible (an NSEC3 hash collision)")                                        \
  COUNTER(kNxDomain, "dns_responses", "rcode", "NXDOMAIN", "the name does not exist")            \
  COUNTER(kNotImp, "dns_responses", "rcode", "NOTIMP", "an opcode other than QUERY")             \
  COUNTER(kRefused, "dns_responses", "rcode", "REFUSED",                                         \
          "not authoritative, other class, or AXFR/IXFR")                                        \
  COUNTER(kNotAuth, "dns_responses", "rcode", "NOTAUTH", "NOTIFY or UPDATE for a zone we serve") \
  COUNTER(kBadVers, "dns_responses", "rcode", "BADVERS", "an EDNS version other than 0")         \
  COUNTER(kRcodeOther, "dns_responses", "rcode", "other", "any other RCODE")                     \
  COUNTER(kKindAnswer, "dns_answers", "kind", "answer", "the data asked for")                    \
  COUNTER(kKindCname, "dns_answers", "kind", "cname",                                            \
          "a CNAME chain was followed (whatever its end)")                                       \
  COUNTER(kKindReferral, "dns_answers", "kind", "referral", "a delegation below a zone cut")     \
  COUNTER(kKindNodata, "dns_answers", "kind", "nodata", "the name exists without the type")      \
  COUNTER(kKindNxdomain, "dns_answers", "kind", "nxdomain", "the name does not exist")           \
  COUNTER(kKindRefused, "dns_answers", "kind", "refused", "a name in no zone we serve")          \
  COUNTER(kWildcard, "dns_wildcard", "", "", "answers synthesized from a wildcard (RFC 4592)")   \
  COUNTER(kDnssecOk, "dns_dnssec_ok", "", "", "responses to queries with the DO bit (RFC 3225)") \
  COUNTER(kPrecompiled, "dns_precompiled", "", "", "responses copied from precompiled answers")
ONEPASS_HANDLER_COUNTERS(DnsCounter, kDnsCounters, ONEPASS_DNS_COUNTERS)

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

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_COUNTERS_H_
