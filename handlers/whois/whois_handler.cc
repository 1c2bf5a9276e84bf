#include "handlers/whois/whois_handler.h"

#include <utility>

#include "handlers/whois/whois_counters.h"
#include "handlers/whois/whois_framer.h"

namespace onepass::whois {

WhoisHandler::WhoisHandler(std::shared_ptr<const WhoisSnapshot> snapshot, const WhoisConfig& config,
                           HandlerCounters& counters)
    : max_query_bytes_(config.max_query_bytes), responder_(std::move(snapshot), config, counters) {}

Verdict WhoisHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                              OutputBuffer& out) {
  const absl::string_view bytes(reinterpret_cast<const char*>(input.data()), input.size());
  const QueryFrame frame = FrameQuery(bytes, context.peer_closed, max_query_bytes_);
  switch (frame.kind) {
    case QueryFrame::Kind::kIncomplete:
      // Closed without a byte: nothing was asked, so nothing to answer.
      if (context.peer_closed) return {Action::kClose, input.size()};
      return {Action::kReadMore, 0};
    case QueryFrame::Kind::kError:
      // What follows a bad line is never read: the connection closes after the error.
      if (!responder_.RespondError(frame.error, "", out)) return TooLarge(input.size(), out);
      return {Action::kWriteThenClose, input.size()};
    case QueryFrame::Kind::kLine:
      // One query per connection (RFC 3912 §2); bytes after the line end are ignored.
      if (!responder_.Respond(frame.line, out)) return TooLarge(frame.consumed, out);
      return {Action::kWriteThenClose, frame.consumed};
  }
  return {Action::kClose, input.size()};
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

}  // namespace onepass::whois
