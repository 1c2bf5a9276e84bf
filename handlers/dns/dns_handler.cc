#include "handlers/dns/dns_handler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "handlers/dns/dns_counters.h"
#include "handlers/dns/dns_framer.h"
#include "handlers/dns/dns_name.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

constexpr size_t kMaxFrameBytes = kLengthPrefixBytes + kMaxMessageBytes;

// RFC 7828 §3.1: the idle timeout in units of 100 ms, at most 0xffff.
uint16_t KeepaliveUnits(absl::Duration keepalive) {
  if (keepalive <= absl::ZeroDuration()) return 0;
  const int64_t units = absl::ToInt64Milliseconds(keepalive) / 100;
  return static_cast<uint16_t>(std::clamp<int64_t>(units, 1, 0xffff));
}

}  // namespace

DnsHandler::DnsHandler(std::shared_ptr<const ZoneSnapshot> snapshot, ResponderConfig config,
                       std::shared_ptr<const PrecompiledAnswers> precompiled,
                       HandlerCounters& counters)
    : responder_(std::move(snapshot), config, std::move(precompiled)), counters_(counters) {}

void DnsHandler::CountResponse(const Response& response) {
  Count(counters_, RcodeCounter(response.rcode));
  const DnsCounter kind = KindCounter(response.answer_kind);
  if (kind != DnsCounter::kCount) Count(counters_, kind);
  if (response.wildcard) Count(counters_, DnsCounter::kWildcard);
  if (response.dnssec_ok) Count(counters_, DnsCounter::kDnssecOk);
  if (response.precompiled) Count(counters_, DnsCounter::kPrecompiled);
}

Verdict DnsHandler::Process(absl::Span<const uint8_t> input, const RequestContext& context,
                            OutputBuffer& out) {
  const uint16_t keepalive_units = KeepaliveUnits(context.keepalive);
  size_t consumed = 0;
  bool answered = false;
  // Every connection stays open between requests when keepalive is on (RFC 7766 §6.2.3).
  const bool keep_open = context.keepalive > absl::ZeroDuration() && !context.peer_closed;
  while (consumed < input.size()) {
    // Let the server send what is pending first: RFC 9210 §4.5 soft limit, and a response of
    // up to 64 KiB must fit whole.
    if (out.size() >= kSoftOutputLimit || (!out.empty() && out.available() < kMaxFrameBytes)) {
      return {out.empty() ? Action::kReadMore : Action::kWriteThenRead, consumed};
    }
    const Frame frame = NextFrame(input.subspan(consumed));
    if (frame.status == FrameStatus::kIncomplete) break;
    if (frame.status == FrameStatus::kInvalid) {
      // Cannot be answered in the protocol: flush earlier answers, then close.
      return {answered ? Action::kWriteThenClose : Action::kClose, consumed};
    }
    absl::Span<uint8_t> tail = out.WritableTail();
    if (tail.size() < kLengthPrefixBytes + kHeaderBytes) {
      return {answered ? Action::kWriteThenRead : Action::kClose, consumed};
    }
    const Response response =
        responder_.Respond(frame.message, tail.subspan(kLengthPrefixBytes),
                           {.keepalive_timeout = keepalive_units, .encrypted = context.encrypted});
    if (response.kind == Response::Kind::kClose) {
      return {answered ? Action::kWriteThenClose : Action::kClose, consumed};
    }
    consumed += frame.frame_bytes;
    if (response.kind == Response::Kind::kDrop) continue;
    CountResponse(response);
    // The length prefix goes in front of the message in the same buffer: one send.
    WriteU16(tail.data(), static_cast<uint16_t>(response.size));
    out.CommitMessage(kLengthPrefixBytes + response.size);
    answered = true;
  }
  const bool more_buffered = consumed < input.size();
  if (!answered) {
    // Nothing to send: wait for the rest of a message, unless none can come.
    return {context.peer_closed ? Action::kClose : Action::kReadMore, consumed};
  }
  // A started next message is read to its end, and so are pipelined queries still on their way
  // (RFC 7766 §6.2.1.1); with --keepalive-ms every connection stays open for more queries (RFC
  // 7766 §6.2.3, as NSD and Knot do), whether or not it asked with edns-tcp-keepalive.
  const bool more_coming = more_buffered || context.more_input_expected;
  if ((more_coming && !context.peer_closed) || keep_open) {
    return {Action::kWriteThenRead, consumed};
  }
  return {Action::kWriteThenClose, consumed};
}

DnsHandlerFactory::DnsHandlerFactory(std::shared_ptr<const ZoneSnapshot> snapshot,
                                     ResponderConfig config)
    : snapshot_(std::move(snapshot)),
      precompiled_(config.precompile_max_bytes > 0
                       ? PrecompiledAnswers::Build(snapshot_, config, config.precompile_max_bytes)
                       : nullptr),
      config_(config) {}

std::unique_ptr<Handler> DnsHandlerFactory::CreateHandler(HandlerCounters& counters) const {
  return std::make_unique<DnsHandler>(snapshot_, config_, precompiled_, counters);
}

std::vector<DataGauge> DnsHandlerFactory::DataGauges() const {
  std::vector<DataGauge> gauges;
  for (const auto& zone : snapshot_->zones()) {
    const std::string origin = NameToText(zone->origin());
    if (const std::optional<uint32_t> serial = zone->serial(); serial.has_value()) {
      gauges.push_back({"dns_zone_serial",
                        "SOA serial of each zone loaded",
                        {{"zone", origin}},
                        double(*serial)});
    }
    gauges.push_back({"dns_zone_names",
                      "owner names (nodes) of each zone loaded",
                      {{"zone", origin}},
                      double(zone->node_count())});
  }
  return gauges;
}

absl::Span<const CounterSpec> DnsHandlerFactory::Counters() const { return kDnsCounters; }

size_t DnsHandlerFactory::MaxRequestBytes() const { return kMaxFrameBytes; }

std::string DnsHandlerFactory::Summary() const {
  std::string out;
  for (const auto& zone : snapshot_->zones()) {
    size_t records = 0;
    for (const auto& [name, node] : zone->nodes()) {
      for (const RRset* rrset : node.rrsets) records += rrset->records.size();
    }
    for (const auto& [name, node] : zone->nsec3_nodes()) {
      for (const RRset* rrset : node.rrsets) records += rrset->records.size();
    }
    absl::StrAppend(&out, "dns: zone ", NameToText(zone->origin()));
    if (const std::optional<uint32_t> serial = zone->serial()) {
      absl::StrAppend(&out, " serial ", *serial);
    }
    absl::StrAppend(&out, ": ", zone->node_count(), " names, ", records, " records");
    if (const auto& expiry = zone->earliest_expiry()) {
      absl::StrAppend(
          &out, ", signed (", zone->denial().has_nsec3() ? "NSEC3" : "NSEC",
          "), earliest signature expiry ",
          absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", absl::FromUnixSeconds(expiry->expiration),
                           absl::UTCTimeZone()),
          " (", NameToText(expiry->owner), ")");
    }
    out += "\n";
    // Where the zone's memory is (handlers/dns/README.md "Where the bytes go").
    const ZoneMemory memory = zone->Memory();
    absl::StrAppend(&out, "dns: zone ", NameToText(zone->origin()), " memory: name table ",
                    memory.node_table_bytes >> 10, " KiB, ", memory.rrsets, " RRsets (",
                    memory.rrset_bytes >> 10, " KiB; ", memory.shared_hits,
                    " more were twins of a shared one), names and RDATA ", memory.arena_bytes >> 10,
                    " KiB\n");
  }
  if (precompiled_ != nullptr) {
    absl::StrAppend(&out, "dns: ", precompiled_->count(), " answers precompiled (",
                    precompiled_->bytes() >> 10, " KiB)",
                    precompiled_->complete() ? "" : ", budget reached", "\n");
  }
  return out;
}

size_t DnsHandlerFactory::OutputBufferBytes() const {
  // Pipelined answers up to the soft limit, plus one largest message that must fit whole.
  return kSoftOutputLimit + kMaxFrameBytes;
}

}  // namespace onepass::dns
