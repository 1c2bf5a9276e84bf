#include "handlers/rdap/rdap_handler.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "handlers/rdap/rdap_counters.h"

namespace onepass::rdap {

RdapHandler::RdapHandler(std::shared_ptr<const RdapSnapshot> snapshot, const RdapConfig& config,
                         HandlerCounters& counters)
    : limits_(config.http),
      counters_(counters),
      responder_(std::move(snapshot), config, counters),
      rate_limiter_(config.rate_limit) {}

Verdict RdapHandler::Finish(bool appended, size_t consumed) {
  if (!appended) {
    Count(counters_, RdapCounter::kOutputFull);
    return {Action::kClose, consumed};
  }
  return {Action::kWriteThenClose, consumed};
}

bool RdapHandler::Admit(const RequestContext& context) {
  const uint64_t evictions = rate_limiter_.evictions_of_limited();
  const bool allowed =
      rate_limiter_.Admit(context.peer, context.now) == whois::WhoisRateLimiter::Decision::kAllow;
  if (rate_limiter_.evictions_of_limited() != evictions) {
    Count(counters_, RdapCounter::kRateLimitEvictions);
  }
  return allowed;
}

Verdict RdapHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                             OutputBuffer& out) {
  if (input.empty()) return {context.peer_closed ? Action::kClose : Action::kReadMore, 0};
  const absl::string_view text(reinterpret_cast<const char*>(input.data()), input.size());
  http::HttpRequest request;
  const http::HttpParseResult parsed = http::ParseHttpRequest(text, limits_, request);
  // One request per connection; only the bytes parsed are consumed, so the server closes
  // gracefully when the client may still be sending (handler.h).
  switch (parsed.status) {
    case http::HttpParseStatus::kIncomplete:
      if (!context.peer_closed) return {Action::kReadMore, 0};
      return Finish(
          responder_.RespondHttpError(http::HttpError::kIncompleteRequest, context.now, out),
          input.size());
    case http::HttpParseStatus::kError:
      return Finish(responder_.RespondHttpError(parsed.error, context.now, out), parsed.consumed);
    case http::HttpParseStatus::kComplete:
      break;
  }
  // RFC 7480 §5.5: a server that limits its clients answers 429; the limit is counted per
  // request that reached the lookup, as Whois counts each query line.
  if (!Admit(context))
    return Finish(responder_.RespondRateLimited(context.now, out), parsed.consumed);
  return Finish(responder_.Respond(request, context.now, out), parsed.consumed);
}

RdapHandlerFactory::RdapHandlerFactory(std::shared_ptr<const RdapSnapshot> snapshot,
                                       RdapConfig config)
    : snapshot_(std::move(snapshot)), config_(std::move(config)) {}

absl::Span<const CounterSpec> RdapHandlerFactory::Counters() const { return kRdapCounters; }

std::vector<DataGauge> RdapHandlerFactory::DataGauges() const {
  const RdapSnapshotStats& stats = snapshot_->stats();
  constexpr char kHelp[] = "RDAP objects loaded, by kind";
  return {{"rdap_objects_loaded", kHelp, {{"kind", "domain"}}, double(stats.domains)},
          {"rdap_objects_loaded", kHelp, {{"kind", "nameserver"}}, double(stats.nameservers)},
          {"rdap_objects_loaded", kHelp, {{"kind", "registrar"}}, double(stats.registrars)},
          {"rdap_objects_loaded", kHelp, {{"kind", "contact"}}, double(stats.contacts)}};
}

std::unique_ptr<Handler> RdapHandlerFactory::CreateHandler(HandlerCounters& counters) const {
  return std::make_unique<RdapHandler>(snapshot_, config_, counters);
}

size_t RdapHandlerFactory::MaxRequestBytes() const { return config_.http.max_header_bytes; }

size_t RdapHandlerFactory::OutputBufferBytes() const {
  return MaxResponseBytes(*snapshot_, config_);
}

std::string RdapHandlerFactory::Summary() const {
  const RdapSnapshotStats& stats = snapshot_->stats();
  std::string summary =
      absl::StrCat("rdap: ", stats.domains, " domains, ", stats.nameservers, " name servers, ",
                   stats.registrars, " registrars, ", stats.contacts, " contacts; last update ",
                   snapshot_->last_update(), "; largest answer ", stats.max_body_bytes, " bytes\n");
  // Not fatal: the answers are still valid RDAP, but miss members the profile requires.
  if (stats.registrars_without_abuse > 0) {
    absl::StrAppend(&summary, "rdap: warning: ", stats.registrars_without_abuse,
                    " registrars lack an abuse email or phone (gTLD RDAP Response Profile "
                    "§2.4.5)\n");
  }
  if (stats.registrars_without_rdap_url > 0) {
    absl::StrAppend(&summary, "rdap: warning: ", stats.registrars_without_rdap_url,
                    " registrars have no RDAP base URL (field 11): their domains carry no "
                    "\"related\" link (profile §2.2)\n");
  }
  return summary;
}

}  // namespace onepass::rdap
