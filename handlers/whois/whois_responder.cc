#include "handlers/whois/whois_responder.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "absl/strings/match.h"
#include "handlers/whois/whois_counters.h"

namespace onepass::whois {
namespace {

constexpr absl::string_view kNoMatchPrefix = "No match for \"";
constexpr absl::string_view kNoMatchSuffix = "\".\r\n";
constexpr absl::string_view kReplyTooLarge = "Error: reply too large.\r\n";
// Registries refuse a client over its rate with one short line and the close.
constexpr absl::string_view kRateLimited =
    "Error: query rate limit exceeded for your address. Please slow down and try again "
    "later.\r\n";
// Room for the longest error line with libidn2's reason.
constexpr size_t kMaxErrorBodyBytes = 512;

size_t TotalSize(std::initializer_list<absl::string_view> pieces) {
  size_t total = 0;
  for (absl::string_view piece : pieces) total += piece.size();
  return total;
}

// Appends every piece, or nothing when they do not all fit.
bool AppendAll(OutputBuffer& out, std::initializer_list<absl::string_view> pieces) {
  if (TotalSize(pieces) > out.available()) return false;
  uint8_t* to = out.WritableTail().data();
  size_t written = 0;
  for (absl::string_view piece : pieces) {
    if (piece.empty()) continue;
    std::memcpy(to + written, piece.data(), piece.size());
    written += piece.size();
  }
  out.Commit(written);
  return true;
}

bool AppendPieces(OutputBuffer& out, const ReplyPieces& reply, absl::string_view tail) {
  if (reply.size() + tail.size() > out.available()) return false;
  uint8_t* to = out.WritableTail().data();
  size_t written = 0;
  for (int i = 0; i < reply.count; ++i) {
    std::memcpy(to + written, reply.pieces[i].data(), reply.pieces[i].size());
    written += reply.pieces[i].size();
  }
  std::memcpy(to + written, tail.data(), tail.size());
  out.Commit(written + tail.size());
  return true;
}

bool Lookup(const WhoisSnapshot& snapshot, const Query& query, ReplyPieces* reply) {
  switch (query.kind) {
    case QueryKind::kAny:
      // A bare name is a domain first, as at every registry; then a host, then a handle.
      if (query.key_is_domain_name) {
        return snapshot.FindDomain(query.key, reply) || snapshot.FindNameserver(query.key, reply) ||
               snapshot.FindContact(query.key, reply);
      }
      return snapshot.FindContact(query.key, reply);
    case QueryKind::kDomain:
      return snapshot.FindDomain(query.key, reply);
    case QueryKind::kNameserver:
      return snapshot.FindNameserver(query.key, reply);
    case QueryKind::kRegistrar:
      return snapshot.FindRegistrar(query.key, reply);
    case QueryKind::kContact:
      return snapshot.FindContact(query.key, reply);
  }
  return false;
}

}  // namespace

size_t MaxReplyBodyBytes(const WhoisSnapshot& snapshot, size_t max_query_bytes) {
  const size_t no_match = kNoMatchPrefix.size() + max_query_bytes + kNoMatchSuffix.size();
  return std::max({snapshot.stats().max_body_bytes, no_match, kMaxErrorBodyBytes});
}

WhoisResponder::WhoisResponder(std::shared_ptr<const WhoisSnapshot> snapshot,
                               const WhoisConfig& config, HandlerCounters& counters)
    : snapshot_(std::move(snapshot)), counters_(counters) {
  // Keys are at most a query line long; growing once here keeps serving allocation-free.
  scratch_.reserve(config.max_query_bytes + 1);
}

bool WhoisResponder::Respond(absl::string_view line, OutputBuffer& out) {
  const Query query = ParseQuery(line, &scratch_);
  if (query.error != QueryError::kNone) return RespondError(query.error, query.error_detail, out);
  Count(counters_, QueryCounter(query.kind));
  ReplyPieces reply;
  if (Lookup(*snapshot_, query, &reply)) {
    if (!AppendPieces(out, reply, snapshot_->tail())) return false;
    Count(counters_, WhoisCounter::kMatch);
    return true;
  }
  // The registries' answer for an unknown object, with the normalized name (upper case).
  if (!AppendAll(out, {kNoMatchPrefix, query.key, kNoMatchSuffix, snapshot_->tail()})) {
    return false;
  }
  Count(counters_, WhoisCounter::kNoMatch);
  return true;
}

bool WhoisResponder::RespondError(QueryError error, absl::string_view detail, OutputBuffer& out) {
  if (!AppendError(error, detail, out)) return false;
  Count(counters_, WhoisCounter::kError);
  return true;
}

bool WhoisResponder::AppendError(QueryError error, absl::string_view detail, OutputBuffer& out) {
  absl::string_view message = QueryErrorMessage(error);
  if (detail.empty()) {
    const absl::string_view period = absl::EndsWith(message, ".") ? "" : ".";
    return AppendAll(out, {message, period, "\r\n", snapshot_->tail()});
  }
  if (absl::EndsWith(message, ".")) message.remove_suffix(1);
  if (detail.size() > kMaxErrorBodyBytes / 2) detail = detail.substr(0, kMaxErrorBodyBytes / 2);
  return AppendAll(out, {message, ": ", detail, ".\r\n", snapshot_->tail()});
}

bool WhoisResponder::RespondTooLarge(OutputBuffer& out) {
  Count(counters_, WhoisCounter::kTooLarge);
  return AppendAll(out, {kReplyTooLarge, snapshot_->tail()});
}

bool WhoisResponder::RespondRateLimited(OutputBuffer& out) {
  Count(counters_, WhoisCounter::kRateLimited);
  return AppendAll(out, {kRateLimited});
}

}  // namespace onepass::whois
