// The answers the DNS frontend makes itself, without a backend: FORMERR to an unparseable
// query, REFUSED when its in-flight window is full, SERVFAIL when every backend is down or the
// deadline passed. Header with the query's ID, opcode, RD and CD, the RCODE, the question if
// there is one; and, for a query that carried EDNS, an OPT record with an Extended DNS Error
// (RFC 8914) saying why, as Unbound and Knot Resolver do. Pure: bytes in, bytes out.
#ifndef ONEPASS_HANDLERS_DNS_FRONTEND_LOCAL_ANSWER_H_
#define ONEPASS_HANDLERS_DNS_FRONTEND_LOCAL_ANSWER_H_

#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "handlers/output_buffer.h"

namespace onepass::dns {

// The UDP payload size our own OPT records advertise (RFC 6891 §6.2.5; the 2020 DNS flag
// day's 1232). Clients of the frontend are on TCP, where it means nothing, but the field must
// hold a value of at least 512.
inline constexpr uint16_t kLocalAnswerUdpSize = 1232;

struct LocalAnswer {
  uint16_t id = 0;                     // the client's query ID
  uint16_t query_flags = 0;            // the query's flag word
  absl::Span<const uint8_t> question;  // the question section, empty when QDCOUNT was 0
  uint16_t rcode = 0;
  // An EDE INFO-CODE (RFC 8914 §4) for the OPT record, added only when `query` (the whole
  // query message) carries an OPT; nullopt: no OPT (RFC 6891 §7 lets an answer without data
  // leave it out).
  std::optional<uint16_t> ede;
  absl::Span<const uint8_t> query;
  // The client's connection is encrypted (RequestContext::encrypted): when `query`'s EDNS(0)
  // OPT has a Padding option, our OPT gets one too, to a multiple of 468 bytes (RFC 8467 §4.1),
  // as the zone mode's answers do. No OPT, no padding.
  bool encrypted = false;
};

// Appends the answer, framed (2-byte length prefix), to `out`; false when it lacks room (for
// the answer unpadded: padding shrinks to the room there is).
bool AppendLocalAnswer(const LocalAnswer& answer, OutputBuffer& out);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_FRONTEND_LOCAL_ANSWER_H_
