// The Whois responder (RFC 3912): one query line in, one whole text reply appended, reading an
// immutable WhoisSnapshot. Per worker (it owns the key buffer reused for every query); no
// clock, no I/O.
//
// Every reply, errors included, is a body followed by the snapshot's tail (the ">>> Last
// update of whois database" line and the terms-of-use footer), as the big registries' servers
// answer; lines end in CRLF. Each reply is appended in one piece or not at all, and counted in
// the worker's block (whois_counters.h).
#ifndef ONEPASS_HANDLERS_WHOIS_WHOIS_RESPONDER_H_
#define ONEPASS_HANDLERS_WHOIS_WHOIS_RESPONDER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "handlers/handler_counters.h"
#include "handlers/output_buffer.h"
#include "handlers/whois/whois_query.h"
#include "handlers/whois/whois_rate_limiter.h"
#include "handlers/whois/whois_snapshot.h"

namespace onepass::whois {

struct WhoisConfig {
  // The longest query line accepted, without CRLF [bytes] (--whois-max-query-bytes).
  size_t max_query_bytes = 512;
  // Per-client query rate limit, per worker (whois_rate_limiter.h). Off unless set (the
  // flags turn it on).
  WhoisRateLimitConfig rate_limit;
};

// The largest reply body (without the tail) for queries up to `max_query_bytes`: the biggest
// object, an error, or a "No match" echoing the longest query.
size_t MaxReplyBodyBytes(const WhoisSnapshot& snapshot, size_t max_query_bytes);

class WhoisResponder {
 public:
  // `counters` holds kWhoisCounters and outlives the responder.
  WhoisResponder(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config,
                 HandlerCounters& counters);

  // Appends the whole reply (body + tail) to one query line. Returns false, appending nothing,
  // when it does not fit.
  bool Respond(absl::string_view line, OutputBuffer& out);
  // Appends the reply to a query that failed framing or parsing. `detail` (may be empty) is
  // appended in parentheses, e.g. libidn2's reason.
  bool RespondError(QueryError error, absl::string_view detail, OutputBuffer& out);
  // For a reply that did not fit: a short error instead; false when even that does not fit.
  bool RespondTooLarge(OutputBuffer& out);
  // The refusal of a client over its query rate: one line, no footer (a scraper gets as
  // little as possible; the query is not looked up).
  bool RespondRateLimited(OutputBuffer& out);

 private:
  bool AppendError(QueryError error, absl::string_view detail, OutputBuffer& out);

  // A SIGHUP reload gives the worker a new handler (and responder) over a new snapshot; this
  // one is freed with the last handler that holds it.
  std::shared_ptr<const WhoisSnapshot> snapshot_;
  HandlerCounters& counters_;
  std::string scratch_;
};

}  // namespace onepass::whois

#endif  // ONEPASS_HANDLERS_WHOIS_WHOIS_RESPONDER_H_
