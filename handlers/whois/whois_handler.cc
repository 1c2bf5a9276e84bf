#include "handlers/whois/whois_handler.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "absl/strings/match.h"

namespace onepass::whois {
namespace {

constexpr absl::string_view kNoMatchPrefix = "No match for \"";
constexpr absl::string_view kNoMatchSuffix = "\".\r\n";
constexpr absl::string_view kReplyTooLarge = "Error: reply too large.\r\n";
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

bool AppendReply(const WhoisSnapshot& snapshot, absl::string_view line, std::string* scratch,
                 OutputBuffer& out) {
  const Query query = ParseQuery(line, scratch);
  if (query.error != QueryError::kNone) {
    return AppendErrorReply(snapshot, query.error, query.error_detail, out);
  }
  ReplyPieces reply;
  if (Lookup(snapshot, query, &reply)) return AppendPieces(out, reply, snapshot.tail());
  // The registries' answer for an unknown object, with the normalized name (upper case).
  return AppendAll(out, {kNoMatchPrefix, query.key, kNoMatchSuffix, snapshot.tail()});
}

bool AppendErrorReply(const WhoisSnapshot& snapshot, QueryError error, absl::string_view detail,
                      OutputBuffer& out) {
  absl::string_view message = QueryErrorMessage(error);
  if (detail.empty()) {
    const absl::string_view period = absl::EndsWith(message, ".") ? "" : ".";
    return AppendAll(out, {message, period, "\r\n", snapshot.tail()});
  }
  if (absl::EndsWith(message, ".")) message.remove_suffix(1);
  if (detail.size() > kMaxErrorBodyBytes / 2) detail = detail.substr(0, kMaxErrorBodyBytes / 2);
  return AppendAll(out, {message, ": ", detail, ".\r\n", snapshot.tail()});
}

WhoisHandler::WhoisHandler(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config)
    : snapshot_(std::move(snapshot)), config_(config) {
  // Keys are at most a query line long; growing once here keeps serving allocation-free.
  scratch_.reserve(config_.max_query_bytes + 1);
}

Verdict WhoisHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                              OutputBuffer& out) {
  const absl::string_view bytes(reinterpret_cast<const char*>(input.data()), input.size());
  const QueryFrame frame = FrameQuery(bytes, context.peer_closed, config_.max_query_bytes);
  switch (frame.kind) {
    case QueryFrame::Kind::kIncomplete:
      // Closed without a byte: nothing was asked, so nothing to answer.
      if (context.peer_closed) return {Action::kClose, input.size()};
      return {Action::kReadMore, 0};
    case QueryFrame::Kind::kError:
      // What follows a bad line is never read: the connection closes after the error.
      if (!AppendErrorReply(*snapshot_, frame.error, "", out)) return TooLarge(input.size(), out);
      return {Action::kWriteThenClose, input.size()};
    case QueryFrame::Kind::kLine:
      // One query per connection (RFC 3912 §2); bytes after the line end are ignored.
      if (!AppendReply(*snapshot_, frame.line, &scratch_, out)) {
        return TooLarge(frame.consumed, out);
      }
      return {Action::kWriteThenClose, frame.consumed};
  }
  return {Action::kClose, input.size()};
}

Verdict WhoisHandler::TooLarge(size_t consumed, OutputBuffer& out) {
  if (AppendAll(out, {kReplyTooLarge, snapshot_->tail()})) {
    return {Action::kWriteThenClose, consumed};
  }
  return {Action::kClose, consumed};
}

WhoisHandlerFactory::WhoisHandlerFactory(std::shared_ptr<const WhoisSnapshot> snapshot,
                                         const WhoisConfig& config)
    : snapshot_(std::move(snapshot)), config_(config) {}

std::unique_ptr<Handler> WhoisHandlerFactory::CreateHandler() const {
  return std::make_unique<WhoisHandler>(snapshot_, config_);
}

size_t WhoisHandlerFactory::OutputBufferBytes() const {
  const size_t no_match = kNoMatchPrefix.size() + config_.max_query_bytes + kNoMatchSuffix.size();
  const size_t body = std::max({snapshot_->stats().max_body_bytes, no_match, kMaxErrorBodyBytes});
  return body + snapshot_->tail().size();
}

}  // namespace onepass::whois
