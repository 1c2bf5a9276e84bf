#include "handlers/ocsp/ocsp_handler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "handlers/ocsp/crl_responder.h"
#include "handlers/ocsp/ocsp_counters.h"

namespace onepass::ocsp {
namespace {

absl::Span<const uint8_t> AsBytes(absl::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

}  // namespace

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
  http::HttpRequest request;
  const http::HttpParseResult parsed = http::ParseHttpRequest(text, limits_, request);
  // One request per connection. Only the bytes parsed are consumed: what is left tells the
  // server that the client may still be sending (an error before the end of the request, or
  // bytes after it), so that it closes gracefully instead of resetting the answer.
  switch (parsed.status) {
    case http::HttpParseStatus::kIncomplete:
      if (context.peer_closed) {
        // Nothing more will come: all of it was read.
        return Finish(
            responder_.RespondHttpError(http::HttpError::kIncompleteRequest, context.now, out),
            input.size());
      }
      // RFC 9110 §10.1.1: a client that sent `Expect: 100-continue` may wait for an interim
      // 100 before the content. Sent once: when the input ends exactly at the head (no content
      // byte yet; a later call sees more bytes), never to HTTP/1.0 (§15.2). Nothing is consumed,
      // so the server waits for the content before calling again (handler.h kWriteThenRead).
      if (parsed.head_bytes != 0 && parsed.head_bytes == input.size() && request.expect_continue &&
          request.minor_version >= 1) {
        if (!out.Append(AsBytes(kHttpContinue))) return {Action::kReadMore, 0};
        Count(counters_, OcspCounter::kContinue);
        return {Action::kWriteThenRead, 0};
      }
      return {Action::kReadMore, 0};
    case http::HttpParseStatus::kError:
      return Finish(responder_.RespondHttpError(parsed.error, context.now, out), parsed.consumed);
    case http::HttpParseStatus::kComplete:
      break;
  }
  return Finish(responder_.Respond(request, context.now, out), parsed.consumed);
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
  // head prefix is a few hundred bytes), plus the per-request Date and Cache-Control. A CRL
  // needs its head and at most kCrlCopiedBodyMax of body: a larger body is sent from the
  // snapshot, so the buffers do not grow with the CRLs (and a CRL that grows needs no restart).
  constexpr size_t kHeadPrefixAllowance = 512;
  const size_t crl_bytes = config_.crls == nullptr ? 0 : kCrlCopiedBodyMax;
  return std::max({snapshot_->max_presigned_bytes(),
                   config_.max_response_bytes + kHeadPrefixAllowance,
                   crl_bytes + kHeadPrefixAllowance}) +
         kMaxDynamicHeadBytes;
}

std::string OcspHandlerFactory::Summary() const {
  const OcspLoadStats& stats = snapshot_->stats();
  std::string summary =
      absl::StrCat("ocsp: ", stats.loaded, " responses (", stats.cert_ids, " CertIDs); skipped ",
                   stats.skipped_expired, " expired, ", stats.skipped_invalid, " unusable\n");
  if (config_.crls != nullptr) {
    for (const auto& crl : config_.crls->entries()) {
      absl::StrAppend(&summary, "ocsp: CRL ", crl->name, ": ", crl->der.size(),
                      " bytes, thisUpdate ", crl->last_modified, ", nextUpdate ", crl->expires,
                      "\n");
    }
  }
  return summary;
}

}  // namespace onepass::ocsp
