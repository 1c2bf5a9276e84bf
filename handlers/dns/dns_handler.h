// The DNS-over-TCP session glue: the Handler the server calls, and its factory.
//
// Process() answers every complete message at the front of the input (RFC 7766 §6.2.1.1:
// pipelined queries are answered, here in order), appending each response with its length
// prefix in one piece (RFC 7766 §8) to the same OutputBuffer so the server sends them in one
// send. It stops at the 64 KiB soft limit of unsent output (RFC 9210 §4.5, CVE-2024-0760).
#ifndef ONEPASS_HANDLERS_DNS_DNS_HANDLER_H_
#define ONEPASS_HANDLERS_DNS_DNS_HANDLER_H_

#include <memory>
#include <utility>
#include <vector>

#include "handlers/dns/dns_responder.h"
#include "handlers/dns/zone_snapshot.h"
#include "handlers/handler.h"

namespace onepass::dns {

// Unsent response bytes after which Process stops answering until the server has sent them.
inline constexpr size_t kSoftOutputLimit = 64 * 1024;

class DnsHandler final : public Handler {
 public:
  // `counters` holds kDnsCounters (dns_counters.h) and outlives the handler.
  DnsHandler(std::shared_ptr<const ZoneSnapshot> snapshot, ResponderConfig config,
             std::shared_ptr<const PrecompiledAnswers> precompiled, HandlerCounters& counters);

  // Interface
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;

 private:
  void CountResponse(const Response& response);

  DnsResponder responder_;
  HandlerCounters& counters_;
};

class DnsHandlerFactory final : public HandlerFactory {
 public:
  // Renders the precompiled answers (config.precompile_max_bytes) once, for all workers.
  DnsHandlerFactory(std::shared_ptr<const ZoneSnapshot> snapshot, ResponderConfig config);

  // Interface
  absl::string_view Name() const override { return "dns"; }
  absl::Span<const CounterSpec> Counters() const override;
  std::unique_ptr<Handler> CreateHandler(HandlerCounters& counters) const override;
  // Interface: per zone, its SOA serial and names (onepass_dns_zone_serial{zone="..."}).
  std::vector<DataGauge> DataGauges() const override;
  size_t MaxRequestBytes() const override;
  size_t OutputBufferBytes() const override;
  // Per zone: origin, SOA serial, names, records, earliest signature expiry; precompiled.
  std::string Summary() const override;
  // Interface: read, parse, index, precompile (as set by whoever loaded the data).
  std::vector<LoadPhase> LoadPhases() const override { return load_phases_; }
  void set_load_phases(std::vector<LoadPhase> phases) { load_phases_ = std::move(phases); }

  const ZoneSnapshot& snapshot() const { return *snapshot_; }
  // Null when precompilation is off.
  const PrecompiledAnswers* precompiled() const { return precompiled_.get(); }

 private:
  std::shared_ptr<const ZoneSnapshot> snapshot_;
  std::shared_ptr<const PrecompiledAnswers> precompiled_;
  ResponderConfig config_;
  std::vector<LoadPhase> load_phases_;
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_DNS_HANDLER_H_
