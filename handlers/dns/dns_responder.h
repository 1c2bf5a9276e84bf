// The DNS responder: one query message in, one response message out, reading an immutable
// ZoneSnapshot. Per worker (it owns scratch space reused for every query); no clock, no I/O.
#ifndef ONEPASS_HANDLERS_DNS_DNS_RESPONDER_H_
#define ONEPASS_HANDLERS_DNS_DNS_RESPONDER_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/types/span.h"
#include "handlers/dns/answer_plan.h"
#include "handlers/dns/dns_query.h"
#include "handlers/dns/message_writer.h"
#include "handlers/dns/precompiled_answers.h"
#include "handlers/dns/zone_snapshot.h"

namespace onepass::dns {

struct ResponderConfig {
  // The UDP payload size we advertise in our OPT (RFC 6891 §6.2.5); 1232 is the DNS flag day
  // 2020 value, NSD's default.
  uint16_t edns_udp_size = 1232;
  // Memory for answers rendered at load time (precompiled_answers.h); 0 turns it off.
  size_t precompile_max_bytes = size_t{16} << 20;
};

// What the connection tells the responder besides the query.
struct QueryTransport {
  // The idle timeout to announce in units of 100 ms when the query asks for it (RFC 7828 §3.3.2;
  // 0: do not announce).
  uint16_t keepalive_timeout = 0;
  // The connection is encrypted (DNS over TLS, RequestContext::encrypted): the answer to a query
  // whose OPT carries a Padding option gets one, to a multiple of 468 bytes (RFC 8467 §4.1).
  // Never on plain TCP: padding in the clear hides nothing (RFC 7830 §6).
  bool encrypted = false;
};

struct Response {
  enum class Kind {
    kAnswer,  // `size` bytes were written
    kDrop,    // nothing to send for this message (it was a response, QR=1)
    kClose,   // not even a header: the connection cannot continue
  };
  Kind kind = Kind::kAnswer;
  size_t size = 0;
  // The response carries an edns-tcp-keepalive option (RFC 7828 §3.3.2).
  bool keepalive = false;
  // The response carries a Padding option (RFC 7830).
  bool padded = false;
  // For the counters (dns_counters.h), when kind is kAnswer: the RCODE sent (extended RCODEs
  // whole), what the answer is (kNone for errors decided before planning), whether a wildcard
  // answered, the query's DO bit, and whether it came from the precompiled answers.
  uint16_t rcode = 0;
  AnswerKind answer_kind = AnswerKind::kNone;
  bool wildcard = false;
  bool dnssec_ok = false;
  bool precompiled = false;
};

class DnsResponder {
 public:
  // `precompiled` may be null (everything is rendered per query); if given it must have been
  // built from the same snapshot and config.
  DnsResponder(std::shared_ptr<const ZoneSnapshot> snapshot, ResponderConfig config,
               std::shared_ptr<const PrecompiledAnswers> precompiled);

  // Answers `message` into `out` (up to 65535 bytes are used). Every response with our OPT
  // is padded when `transport.encrypted` and the query's EDNS(0) OPT has a Padding option:
  // to the next multiple of 468 bytes, or as far as `out` and the 65535-byte limit allow
  // when that does not fit (records are never left out for padding); FORMERR and NOTIMP
  // carry no OPT, so no padding, and neither does an answer to a query without EDNS.
  Response Respond(absl::Span<const uint8_t> message, absl::Span<uint8_t> out,
                   const QueryTransport& transport);

 private:
  // What an error response carries besides its header (RFC 1035 §4.1.1).
  struct ErrorReply {
    uint16_t rcode = 0;
    // The question section; NSD leaves it out of most errors (query_error).
    bool with_question = false;
    // Our OPT (only when the query had one; never with FORMERR, whose cause may be the OPT).
    bool with_opt = false;
    // RFC 8914 INFO-CODE in the OPT.
    std::optional<uint16_t> ede;
  };
  size_t WriteError(const ErrorReply& reply);
  size_t WriteAnswer(uint16_t keepalive_timeout, Response& response);
  bool WriteHeaderAndQuestion(uint16_t flags, bool with_question);
  // The precompiled answer patched for this query, or 0 if there is none.
  size_t WritePrecompiled(uint16_t keepalive_timeout, Response& response);
  // Appends our OPT (RFC 6891 §6.1.2), with a Padding option when pad_, and counts it in
  // ARCOUNT.
  bool WriteOpt(uint8_t extended_rcode, std::optional<uint16_t> ede, uint16_t keepalive_timeout);

  std::shared_ptr<const ZoneSnapshot> snapshot_;
  std::shared_ptr<const PrecompiledAnswers> precompiled_;
  ResponderConfig config_;
  // Per-worker scratch reused for every query.
  ParsedQuery query_;
  // This query's answer is padded (RFC 8467): encrypted, EDNS version 0, a Padding option.
  bool pad_ = false;
  bool padded_ = false;  // and WriteOpt wrote the option
  AnswerPlan plan_;
  MessageWriter writer_;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_RESPONDER_H_
