#include "handlers/ocsp/ocsp_handler.h"

#include <algorithm>
#include <utility>

#include "handlers/ocsp/ocsp_counters.h"

namespace onepass::ocsp {

OcspHandler::OcspHandler(const OcspHandlerConfig& config,
                         std::shared_ptr<const OcspSnapshot> snapshot, HandlerCounters& counters)
    : limits_(config.http),
      counters_(counters),
      responder_(config, std::move(snapshot), counters) {}

Verdict OcspHandler::Finish(bool appended, size_t consumed) {
  if (!appended) {
    Count(counters_, OcspCounter::kOutputFull);
    return {Action::kClose, consumed};
  }
  return {Action::kWriteThenClose, consumed};
}

Verdict OcspHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                             OutputBuffer& out) {
  if (input.empty()) return {context.peer_closed ? Action::kClose : Action::kReadMore, 0};
  const absl::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  HttpRequest request;
  const HttpParseResult parsed = ParseHttpRequest(text, limits_, request);
  // One request per connection: whatever the outcome, every byte received is done with.
  switch (parsed.status) {
    case HttpParseStatus::kIncomplete:
      if (!context.peer_closed) return {Action::kReadMore, 0};
      return Finish(responder_.RespondHttpError(HttpError::kIncompleteRequest, context.now, out),
                    input.size());
    case HttpParseStatus::kError:
      return Finish(responder_.RespondHttpError(parsed.error, context.now, out), input.size());
    case HttpParseStatus::kComplete:
      break;
  }
  return Finish(responder_.Respond(request, context.now, out), input.size());
}

OcspHandlerFactory::OcspHandlerFactory(OcspHandlerConfig config,
                                       std::shared_ptr<const OcspSnapshot> snapshot)
    : config_(std::move(config)), snapshot_(std::move(snapshot)) {}

absl::Span<const CounterSpec> OcspHandlerFactory::Counters() const { return kOcspCounters; }

std::vector<DataGauge> OcspHandlerFactory::DataGauges() const {
  std::vector<DataGauge> gauges = {
      {"ocsp_responses_loaded", "OCSP responses indexed", {}, double(snapshot_->stats().loaded)},
      {"ocsp_cert_ids_loaded", "CertIDs answered", {}, double(snapshot_->stats().cert_ids)}};
  absl::optional<absl::Time> earliest;
  for (const OcspResponseEntry& entry : snapshot_->entries()) {
    if (entry.next_update && (!earliest || *entry.next_update < *earliest)) {
      earliest = entry.next_update;
    }
  }
  // RFC 6960 §4.2.2.1: past it, a response must not be served; alert before it.
  if (earliest) {
    gauges.push_back({"ocsp_earliest_next_update_timestamp_seconds",
                      "Unix time of the earliest nextUpdate among the loaded responses",
                      {},
                      absl::ToDoubleSeconds(*earliest - absl::UnixEpoch())});
  }
  return gauges;
}

std::unique_ptr<Handler> OcspHandlerFactory::CreateHandler(HandlerCounters& counters) const {
  return std::make_unique<OcspHandler>(config_, snapshot_, counters);
}

size_t OcspHandlerFactory::MaxRequestBytes() const {
  return config_.http.max_header_bytes + config_.http.max_body_bytes;
}

size_t OcspHandlerFactory::OutputBufferBytes() const {
  // Room for any response the snapshot holds and for one reloaded within the same limit (its
  // head prefix is a few hundred bytes), plus the per-request Date and Cache-Control.
  constexpr size_t kHeadPrefixAllowance = 512;
  return std::max(snapshot_->max_presigned_bytes(),
                  config_.max_response_bytes + kHeadPrefixAllowance) +
         kMaxDynamicHeadBytes;
}

}  // namespace onepass::ocsp
