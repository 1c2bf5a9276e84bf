#include "handlers/whois/whois_handler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "handlers/whois/whois_counters.h"
#include "handlers/whois/whois_framer.h"

namespace onepass::whois {

WhoisHandler::WhoisHandler(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config,
                           HandlerCounters& counters)
    : max_query_bytes_(config.max_query_bytes),
      counters_(counters),
      responder_(std::move(snapshot), config, counters),
      rate_limiter_(config.rate_limit) {}

bool WhoisHandler::Admit(const RequestContext& context) {
  const uint64_t evictions = rate_limiter_.evictions_of_limited();
  const bool allowed =
      rate_limiter_.Admit(context.peer, context.now) == WhoisRateLimiter::Decision::kAllow;
  if (rate_limiter_.evictions_of_limited() != evictions) {
    Count(counters_, WhoisCounter::kRateLimitEvictions);
  }
  return allowed;
}

Verdict WhoisHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                              OutputBuffer& out) {
  const absl::string_view bytes(reinterpret_cast<const char*>(input.data()), input.size());
  const QueryFrame frame = FrameQuery(bytes, context.peer_closed, max_query_bytes_);
  switch (frame.kind) {
    case QueryFrame::Kind::kIncomplete:
      // Closed without a byte: nothing was asked, so nothing to answer.
      if (context.peer_closed) return {Action::kClose, input.size()};
      return {Action::kReadMore, 0};
    case QueryFrame::Kind::kError: {
      if (!Admit(context)) return RateLimited(frame.consumed, out);
      // What follows a bad line is never read: the connection closes after the error. Only
      // what was framed is consumed, so the server knows the client may still be sending
      // (lingering close).
      const size_t consumed = frame.consumed;
      if (!responder_.RespondError(frame.error, "", out)) return TooLarge(consumed, out);
      return {Action::kWriteThenClose, consumed};
    }
    case QueryFrame::Kind::kLine:
      if (!Admit(context)) return RateLimited(frame.consumed, out);
      // One query per connection (RFC 3912 §2); bytes after the line end are ignored.
      if (!responder_.Respond(frame.line, out)) return TooLarge(frame.consumed, out);
      return {Action::kWriteThenClose, frame.consumed};
  }
  return {Action::kClose, input.size()};
}

Verdict WhoisHandler::RateLimited(size_t consumed, OutputBuffer& out) {
  if (responder_.RespondRateLimited(out)) return {Action::kWriteThenClose, consumed};
  return {Action::kClose, consumed};
}

Verdict WhoisHandler::TooLarge(size_t consumed, OutputBuffer& out) {
  if (responder_.RespondTooLarge(out)) return {Action::kWriteThenClose, consumed};
  return {Action::kClose, consumed};
}

WhoisHandlerFactory::WhoisHandlerFactory(std::shared_ptr<const WhoisSnapshot> snapshot,
                                         const WhoisConfig& config)
    : snapshot_(std::move(snapshot)), config_(config) {}

absl::Span<const CounterSpec> WhoisHandlerFactory::Counters() const { return kWhoisCounters; }

std::vector<DataGauge> WhoisHandlerFactory::DataGauges() const {
  const WhoisSnapshotStats& stats = snapshot_->stats();
  constexpr char kHelp[] = "Whois objects loaded, by kind";
  return {{"whois_objects_loaded", kHelp, {{"kind", "domain"}}, double(stats.domains)},
          {"whois_objects_loaded", kHelp, {{"kind", "nameserver"}}, double(stats.nameservers)},
          {"whois_objects_loaded", kHelp, {{"kind", "registrar"}}, double(stats.registrars)},
          {"whois_objects_loaded", kHelp, {{"kind", "contact"}}, double(stats.contacts)}};
}

std::unique_ptr<Handler> WhoisHandlerFactory::CreateHandler(HandlerCounters& counters) const {
  return std::make_unique<WhoisHandler>(snapshot_, config_, counters);
}

size_t WhoisHandlerFactory::MaxRequestBytes() const {
  return MaxBufferedBytes(config_.max_query_bytes);
}

size_t WhoisHandlerFactory::OutputBufferBytes() const {
  return MaxReplyBodyBytes(*snapshot_, config_.max_query_bytes) + snapshot_->tail().size();
}

std::string WhoisHandlerFactory::Summary() const {
  const WhoisSnapshotStats& stats = snapshot_->stats();
  return absl::StrCat(
      "whois: ", stats.domains, " domains, ", stats.nameservers, " name servers, ",
      stats.registrars, " registrars, ", stats.contacts, " contacts; last update ",
      snapshot_->last_update().empty() ? absl::string_view("not given") : snapshot_->last_update(),
      "\n");
}

}  // namespace onepass::whois
