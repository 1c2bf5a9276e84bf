// One worker's TLS transports (--tls-listen) and their admission: the context new connections
// start under (replaced on reload; a connection keeps the one it began with), the worker's TLS
// counters, and what keeps stalled or flooding clients from holding the handshakes:
//   - the per-prefix rates of new handshakes (handshake_limiter.h), asked at the ClientHello,
//     before the key exchange and the signature;
//   - the handshake room (server/core/waiting_room.h): handshakes parked for their clients, at
//     most --tls-max-handshakes (this worker's share), of which --tls-handshakes-per-client per
//     prefix. A full room makes space from the handshake that has waited longest (evicted);
//     a prefix at its share is refused at its hello (limit).
// The worker core knows none of this: it sees Transport's lifecycle calls and evicts the
// connections this asks it to (TransportHost::Evict).
#ifndef ONEPASS_SERVER_TRANSPORT_TLS_TLS_TRANSPORT_FACTORY_H_
#define ONEPASS_SERVER_TRANSPORT_TLS_TLS_TRANSPORT_FACTORY_H_

#include <array>
#include <cstdint>
#include <memory>

#include "server/core/client_limits.h"
#include "server/core/waiting_room.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_stats.h"
#include "server/transport/tls/handshake_limiter.h"
#include "server/transport/tls/tls_transport.h"
#include "server/transport/transport.h"

namespace onepass {

class TlsTransportFactory final : public TransportFactory {
 public:
  // This worker's share of the server-wide TLS limits.
  struct Limits {
    int max_handshakes = 1;         // in progress at once (at least 1)
    int handshakes_per_client = 0;  // of them, per prefix; 0: no share
    HandshakeLimiter::Rates rates;  // new ones per prefix per second; 0: unlimited
    int prefix_v4 = 32;             // the bits of an address that make a prefix
    int prefix_v6 = 64;
  };

  // `limits` null: no admission at all (tests of the transport alone).
  TlsTransportFactory(std::shared_ptr<const tls::TlsServerContext> context, const Limits* limits);
  TlsTransportFactory(const TlsTransportFactory&) = delete;
  TlsTransportFactory& operator=(const TlsTransportFactory&) = delete;

  // The worker core that closes what the room evicts; before the first connection.
  void set_host(TransportHost* host) { host_ = host; }
  // Between two events: connections accepted from now on start under `context` (a SIGHUP's new
  // certificate, key or ticket keys); those in flight keep theirs.
  void SwapContext(std::shared_ptr<const tls::TlsServerContext> context) {
    context_ = std::move(context);
  }
  const tls::TlsServerContext* context() const { return context_.get(); }
  // Any thread: handshakes and failures of this worker's TLS connections.
  const tls::TlsStats& stats() const { return stats_; }

  // TransportFactory.
  std::unique_ptr<Transport> Make() override;
  bool Start(Transport& transport, const std::array<uint8_t, 16>& peer, void* owner) override;

  // TlsTransport's side.
  ClientKey ClientKeyFor(const std::array<uint8_t, 16>& peer) const;
  bool AdmitRate(const ClientKey& client, bool resumption);
  // At the ClientHello: whether its prefix may hold one more handshake, making room from the
  // one that has waited longest when all are taken.
  bool MakeRoomFor(TlsTransport& transport);
  bool MayWait(TlsTransport& transport);
  void Parked(TlsTransport& transport);
  void Ended(TlsTransport& transport);
  void TimedOut(TlsTransport& transport);

 private:
  // While the room is full (not counting `self`): closes the handshake that has waited
  // longest (counted: evicted).
  void EvictOldest(const WaitingRoom::Entry* self);
  void Count(tls::TlsFailure failure) {
    stats_.failed_by(failure).fetch_add(1, std::memory_order_relaxed);
  }

  std::shared_ptr<const tls::TlsServerContext> context_;
  tls::TlsStats stats_;
  int prefix_v4_ = 32;
  int prefix_v6_ = 64;
  // Null without limits.
  std::unique_ptr<HandshakeLimiter> limiter_;
  std::unique_ptr<WaitingRoom> room_;
  TransportHost* host_ = nullptr;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_TRANSPORT_TLS_TLS_TRANSPORT_FACTORY_H_
