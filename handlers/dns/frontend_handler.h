// The DNS-over-TCP frontend (--handler dns --dns-backend ADDR:PORT ...): every query a client
// sends over TCP is forwarded over UDP to a backend (an authoritative server or a resolver),
// and the backend's answer goes back on the client's connection, byte for byte except the ID.
//
// The protocol half only: the server (server/upstream/upstream_channel.h) owns the UDP sockets and
// the timer; this handler rewrites each query's ID into its worker's ID space, remembers which
// connection and client ID it belongs to (frontend_backends.h), checks that a reply's ID and
// question match what was sent, restores the client's ID, and turns a passed deadline into
// SERVFAIL. Pipelined queries (RFC 7766 §6.2.1.1) are all forwarded at once and answered as
// their replies return, in any order. A query is forwarded untouched: opcode, unknown types
// and classes, EDNS options, DO and CD.
//
// A UDP reply with TC=1 is not for the client: the query, as first sent, goes again to the
// same backend over TCP (UpstreamAnswer::resend_over_stream; the server's pooled connections,
// server/upstream/upstream_stream_pool.h, framed by FrameLength), with the same ID and deadline,
// and only the TCP answer completes it (RFC 7766 §5). docs/design.md "A handler that forwards".
//
// Serve-stale (RFC 8767, with --dns-serve-stale-seconds): a query whose cached answer has
// expired within the stale window gets it with TTL 30 at once while every backend is down;
// otherwise it is forwarded, and the stale answer goes to the client instead of SERVFAIL when
// the backend fails (deadline, SERVFAIL), and, with --dns-stale-answer-client-timeout-ms,
// when no answer has come within that timer (the query stays in flight: its answer refreshes
// the cache and goes to nobody). After a failure the stale answer is served without asking
// for --dns-stale-refresh-seconds (§4).
//
// Deadlines and health (frontend_backends.h): a query unanswered over UDP for
// --dns-backend-udp-timeout-ms goes once more over TCP, and fails at --dns-backend-timeout-ms;
// a timeout only makes the backend suspect, and it is marked down when its own probes fail.
//
// Overload: a worker with --dns-max-in-flight queries outstanding answers REFUSED at once
// rather than stop reading. Why: stopping would need the server to pause every connection of
// the worker (it knows nothing of queries), a client that gets REFUSED retries another server
// at once instead of waiting out a timeout, and memory stays bounded either way.
#ifndef ONEPASS_HANDLERS_DNS_FRONTEND_HANDLER_H_
#define ONEPASS_HANDLERS_DNS_FRONTEND_HANDLER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/socket_address.h"
#include "handlers/dns/dns_cache.h"
#include "handlers/dns/frontend_backends.h"
#include "handlers/dns/frontend_counters.h"
#include "handlers/handler.h"

namespace onepass::dns {

struct FrontendConfig {
  // By slot (frontend_backends.h): --dns-backend in order, or --dns-backends-file's backends
  // in --dns-max-backends slots, the vacant ones with length 0.
  std::vector<SocketAddress> backends;
  std::string backends_file;                  // --dns-backends-file; empty with --dns-backend
  absl::Duration timeout = absl::Seconds(1);  // --dns-backend-timeout-ms
  // --dns-backend-udp-timeout-ms: then once more over TCP, until `timeout`.
  absl::Duration udp_timeout = absl::Milliseconds(500);
  size_t max_in_flight = 16384;  // per worker: --dns-max-in-flight
  int down_after = 3;            // --dns-backend-down-after
  absl::Duration probe_interval = absl::Seconds(1);
  std::string probe_name_wire = std::string(1, '\0');  // --dns-probe-name, wire format
  CacheConfig cache;                                   // --dns-cache-*
  int tcp_connections = 2;                             // --dns-backend-tcp-connections
  int port_queries = 1;                                // --dns-backend-port-queries
  int max_ports = 512;                                 // --dns-backend-max-ports
  // --dns-backend-tcp-idle-ms
  absl::Duration tcp_idle_timeout = absl::Seconds(10);
  // --dns-stale-answer-client-timeout-ms: RFC 8767 §5 client-response timer; zero: off.
  absl::Duration stale_client_timeout = absl::ZeroDuration();
};

class FrontendHandler final : public Handler, public ForwardingHandler {
 public:
  FrontendHandler(const FrontendConfig& config, HandlerCounters& counters);

  // Interface
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override;
  ForwardingHandler* forwarding() override { return this; }
  // Interface ForwardingHandler
  UpstreamAnswer TakeUpstreamReply(int upstream, absl::Span<const uint8_t> datagram, absl::Time now,
                                   OutputBuffer& out) override;
  // Interface
  UpstreamAnswer TakeUpstreamStreamReply(int upstream, absl::Span<const uint8_t> frame,
                                         absl::Time now, OutputBuffer& out) override;
  // Interface
  bool TakeExpired(absl::Time now, OutputBuffer& out, UpstreamAnswer& answer,
                   UpstreamQueue& probes) override;
  // Interface. Takes the queries in flight and the health of each backend that kept its slot
  // when the limits are unchanged, and the cache when its settings are; zeroes the counters of
  // the slots whose backend changed.
  void TakeOver(ForwardingHandler& previous) override;
  // Interface. SERVFAIL (EDE No Reachable Authority) for each query TakeOver left here.
  bool TakeAbandoned(absl::Time now, OutputBuffer& out, UpstreamAnswer& answer) override;

  const FrontendBackends& backends() const { return backends_; }
  const DnsCache& cache() const { return cache_; }

 private:
  void Count(size_t counter) { counters_.Add(counter); }
  void CountBackend(int backend, BackendCounter counter) {
    counters_.Add(BackendCounterIndex(static_cast<size_t>(backend), counter));
  }
  // backends_.Complete, and the backend's down gauge cleared when it marked it up.
  bool Complete(int backend, uint16_t id);
  // A reply from `upstream` that came over UDP or (`over_tcp`) TCP: the answer for its client,
  // a TCP retry of a TC=1 answer (in `out`, framed), or dropped.
  UpstreamAnswer TakeReply(int upstream, absl::Span<const uint8_t> reply, bool over_tcp,
                           absl::Time now, OutputBuffer& out);
  // Appends `query` with its length prefix; false without room (cannot happen: sized).
  static bool AppendFramed(const std::string& query, OutputBuffer& out);
  // Appends (framed) the stale answer for `entry`'s query, with the client's ID; false when
  // the cache holds none for it (docs: dns_cache.h AnswerStale).
  bool AppendStale(const InFlight& entry, absl::Time now, OutputBuffer& out);
  // Appends (framed) SERVFAIL for `entry`'s query; false without room.
  bool AppendServfail(const InFlight& entry, OutputBuffer& out);
  // Queues a SOA probe for `backend`.
  void SendProbe(int backend, absl::Time now, UpstreamQueue& probes);

  const FrontendConfig config_;
  HandlerCounters& counters_;
  FrontendBackends backends_;
  DnsCache cache_;
  std::vector<uint8_t> scratch_;  // a health probe or a stale answer's query being built
  std::string key_;               // the cache key of the query at hand
};

class FrontendHandlerFactory final : public HandlerFactory {
 public:
  explicit FrontendHandlerFactory(FrontendConfig config);

  // Interface
  absl::string_view Name() const override { return "dns"; }
  absl::Span<const CounterSpec> Counters() const override;
  std::unique_ptr<Handler> CreateHandler(HandlerCounters& counters) const override;
  size_t MaxRequestBytes() const override;
  size_t OutputBufferBytes() const override;
  std::optional<ForwardingSpec> Forwarding() const override;
  // Interface. Each backend asked whether it recurses (open_resolver_probe.h).
  std::vector<StartupProbe> StartupProbes() const override;
  // Interface. With the previous factory's slots (same count, i.e. --dns-max-backends): a
  // backend listed by both keeps its slot; a new one takes a slot vacant in both if any, else
  // one freed now; the counters are renamed to match.
  void ArrangeAfter(const HandlerFactory& previous) override;
  // One line per backend, and what each must be configured with (docs/operations.md).
  std::string Summary() const override;
  // The parts of Forwarding().
  absl::Duration UpstreamTickPeriod() const;
  UpstreamStreamConfig UpstreamStreams() const;
  UpstreamDatagramConfig UpstreamDatagrams() const;
  const FrontendConfig& config() const { return config_; }
  size_t backend_count() const;  // slots that hold a backend

 private:
  void NameCounters();  // counter_specs_ from the slots
  FrontendConfig config_;
  absl::Span<const CounterSpec> counter_specs_;  // FrontendCounterSpecs: static storage
};

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_FRONTEND_HANDLER_H_
