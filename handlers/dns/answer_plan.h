// Decides what an authoritative answer holds: which RRsets go in which section, the RCODE and
// the AA bit. The rules follow RFC 1034 §4.3.2 as NSD implements them (query.c), so that the
// differential test against NSD can demand identical answers:
//  - exact match; CNAME chased through every zone we serve (loop-safe, bounded);
//  - NXDOMAIN / NODATA with the SOA in authority, TTL min(SOA TTL, MINIMUM) (RFC 2308 §3);
//  - wildcards from the closest encloser, blocked by existing names (RFC 4592 §3.3.1);
//  - referrals below a zone cut (NS in authority, glue in additional, no AA); DS at a cut is
//    answered from the parent side (RFC 4035 §3.1.4.1);
//  - positive answers carry the apex NS in authority (except for DS, DNSKEY and ANY), and
//    A/AAAA of in-zone NS, MX and SRV targets in additional (RFC 1035 §3.3.9, RFC 2782);
//  - QTYPE=ANY answers one RRset (RFC 8482 §4.1, NSD's choice of which);
//  - with the DO bit and a signed zone (RFC 4035 §3.1): each RRset's RRSIGs, DS or the proof
//    of no DS in referrals, and the NSEC or NSEC3 records that prove an NXDOMAIN, a NODATA or
//    a wildcard expansion (RFC 4035 §3.1.3, RFC 5155 §7.2), chosen as NSD chooses them.
#ifndef ONEPASS_HANDLERS_DNS_ANSWER_PLAN_H_
#define ONEPASS_HANDLERS_DNS_ANSWER_PLAN_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "handlers/dns/zone_snapshot.h"

namespace onepass::dns {

// Sections in the order they are written. The optional authority (apex NS of a positive
// answer) and the additional records are left out rather than truncating the answer.
enum class Section : uint8_t {
  kAnswer = 0,
  kAuthority = 1,
  kOptionalAuthority = 2,
  kAdditionalA = 3,
  kAdditionalAaaa = 4,
};
inline constexpr int kSectionCount = 5;

struct PlanEntry {
  Section section;
  // Canonical owner name; views into the snapshot or the query, valid while both are.
  absl::string_view owner;
  const RRset* rrset;
  // Send the RRset's RRSIGs after it (a DO query, a signed zone, not an RRSIG RRset).
  bool with_signatures;
};

// What the answer is, for the counters (dns_counters.h). kNone: no plan was made (an error
// response decided before planning).
enum class AnswerKind : uint8_t {
  kNone,
  kAnswer,    // the RRset asked for (QTYPE=ANY: one RRset)
  kCname,     // a CNAME chain was followed, whatever its end
  kReferral,  // below a zone cut (RFC 1034 §4.3.2 step 3b)
  kNodata,    // the name exists, the type does not (RFC 2308 §2.2)
  kNxdomain,  // RFC 2308 §2.1
  kRefused,   // the name is in no zone served
};

struct AnswerPlan {
  uint16_t rcode = 0;
  AnswerKind kind = AnswerKind::kNone;
  // The answer was synthesized from a wildcard (RFC 4592 §3.3.1).
  bool wildcard = false;
  bool authoritative = false;
  // RFC 8914 INFO-CODE to send in an OPT.
  std::optional<uint16_t> ede;
  std::vector<PlanEntry> entries;

  void Clear() {
    rcode = 0;
    kind = AnswerKind::kNone;
    wildcard = false;
    authoritative = false;
    ede.reset();
    entries.clear();
  }
};

// Longest CNAME chain followed (NSD stops only at loops); beyond it the partial chain is sent,
// which tells a resolver to continue from the last target (RFC 1034 §3.6.2).
inline constexpr int kMaxCnameChain = 16;

// Fills `plan` for the question (qname canonical); `dnssec_ok` is the query's DO bit
// (RFC 3225). `plan` keeps its capacity between calls: after warm-up this allocates nothing.
void PlanAnswer(const ZoneSnapshot& snapshot, absl::string_view qname, uint16_t qtype,
                uint16_t qclass, bool dnssec_ok, AnswerPlan& plan);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_ANSWER_PLAN_H_
