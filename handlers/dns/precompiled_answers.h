// Responses rendered at load time (NSD-style precompilation; docs/design.md "The handler
// contract"): for every name in
// every zone and the types a client is likely to ask there (the types present, plus A and
// AAAA), the whole response to a lowercase, RD=0, EDNS-less query with ID 0. Answering such a
// query is then one hash lookup, one copy, and three patches: the ID, the RD bit and the
// question name's case (same length, so every compression pointer stays valid). An OPT, if
// the query had one, is appended after. Immutable, shared by all workers like the snapshot.
//
// When some zone is signed, each answer is also rendered for a query with the DO bit
// (RFC 3225: RRSIGs and denial proofs, answer_plan.h), stored without its OPT; the two
// renderings share one string when they are the same (unsigned data).
#ifndef ONEPASS_HANDLERS_DNS_PRECOMPILED_ANSWERS_H_
#define ONEPASS_HANDLERS_DNS_PRECOMPILED_ANSWERS_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "handlers/dns/answer_plan.h"
#include "handlers/dns/zone_snapshot.h"

namespace onepass::dns {

struct ResponderConfig;

class PrecompiledAnswers {
 public:
  // Renders answers until they take `max_bytes` of memory (table slots and heap blocks
  // counted, not only the answers' bytes); the rest is answered the normal way. Uses the responder
  // itself, so a precompiled answer is byte for byte what the normal path would send.
  static std::shared_ptr<const PrecompiledAnswers> Build(
      std::shared_ptr<const ZoneSnapshot> snapshot, const ResponderConfig& config,
      size_t max_bytes);

  // A stored answer and what the responder knew when rendering it (for the counters).
  struct Answer {
    const std::string* bytes;
    uint16_t rcode;
    AnswerKind kind;
    bool wildcard;
  };

  // `key`: canonical name followed by the big-endian QTYPE; `dnssec_ok`: the query's DO bit.
  // nullopt if not precompiled.
  std::optional<Answer> Find(absl::string_view key, bool dnssec_ok) const {
    auto it = answers_.find(key);
    if (it == answers_.end()) return std::nullopt;
    const Entry& entry = it->second;
    return Answer{dnssec_ok && !entry.dnssec.empty() ? &entry.dnssec : &entry.plain, entry.rcode,
                  entry.kind, entry.wildcard};
  }
  size_t count() const { return answers_.size(); }
  size_t bytes() const { return bytes_; }
  // False when max_bytes stopped the build early.
  bool complete() const { return complete_; }

 private:
  struct Entry {
    std::string plain;
    std::string dnssec;  // empty: the same as `plain`
    uint16_t rcode = 0;
    AnswerKind kind = AnswerKind::kNone;
    bool wildcard = false;
  };
  absl::flat_hash_map<std::string, Entry> answers_;
  size_t bytes_ = 0;
  bool complete_ = true;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_PRECOMPILED_ANSWERS_H_
