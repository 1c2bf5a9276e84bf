// Parses one DNS query message (RFC 1035 §4.1) into what the responder needs, deciding the
// protocol errors the way NSD does (query.c: query_process) so that both servers agree.
#ifndef ONEPASS_HANDLERS_DNS_DNS_QUERY_H_
#define ONEPASS_HANDLERS_DNS_DNS_QUERY_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

enum class QueryStatus {
  kOk,       // a well-formed QUERY: answer it
  kDrop,     // QR=1, a response: not answered (RFC 1035 §4.1.1; NSD drops it too)
  kFormErr,  // malformed (RFC 1035 §4.1.1 RCODE 1); the header was readable
  kNotImp,   // opcode other than QUERY (RFC 1035 §4.1.1 RCODE 4)
  kNotAuth,  // a TSIG record: no keys are configured, so it cannot verify (RFC 8945 §5.2)
};

// The OPT record of the query (RFC 6891 §6.1).
struct EdnsQuery {
  bool present = false;
  bool do_bit = false;
  uint8_t version = 0;
  // An edns-tcp-keepalive option (RFC 7828 §3.2.1) was in the OPT.
  bool keepalive = false;
  // A Padding option (RFC 7830 §3, of any length and content) was in the OPT: over an
  // encrypted transport the answer is padded too (RFC 8467 §4.1).
  bool padding = false;
};

struct ParsedQuery {
  QueryStatus status = QueryStatus::kFormErr;
  uint16_t id = 0;
  uint16_t flags = 0;  // the query's flag word as received
  // The question, valid when status is kOk or kNotAuth.
  uint8_t qname[kMaxNameBytes];  // as sent (case preserved, RFC 4343 §4.1)
  // Canonical: what lookups use. Followed by QTYPE (big-endian) so that name + type is one
  // contiguous key for the precompiled answers.
  uint8_t qname_lower[kMaxNameBytes + 2];
  uint8_t qname_size = 0;
  uint16_t qtype = 0;
  uint16_t qclass = 0;
  EdnsQuery edns;

  absl::string_view canonical_qname() const {
    return {reinterpret_cast<const char*>(qname_lower), qname_size};
  }
  absl::string_view answer_key() const {
    return {reinterpret_cast<const char*>(qname_lower), size_t{qname_size} + 2};
  }
};

// Parses `message` (at least kHeaderBytes long) into `query`. Reads only inside `message`;
// every count and length is checked, so any byte string is safe.
void ParseQuery(absl::Span<const uint8_t> message, ParsedQuery& query);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_QUERY_H_
