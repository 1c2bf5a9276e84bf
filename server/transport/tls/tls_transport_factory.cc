#include "server/transport/tls/tls_transport_factory.h"

#include <utility>

#include "server/core/worker_metrics.h"

namespace onepass {

TlsTransportFactory::TlsTransportFactory(std::shared_ptr<const tls::TlsServerContext> context,
                                         const Limits* limits)
    : context_(std::move(context)) {
  if (limits == nullptr) return;
  prefix_v4_ = limits->prefix_v4;
  prefix_v6_ = limits->prefix_v6;
  limiter_ = std::make_unique<HandshakeLimiter>(limits->rates);
  room_ = std::make_unique<WaitingRoom>(limits->max_handshakes, limits->handshakes_per_client);
}

std::unique_ptr<Transport> TlsTransportFactory::Make() {
  return std::make_unique<TlsTransport>(this);
}

bool TlsTransportFactory::Start(Transport& transport, const std::array<uint8_t, 16>& peer,
                                void* owner) {
  auto& tls = static_cast<TlsTransport&>(transport);  // made by Make
  if (tls.Begin(context_, &stats_, ClientKeyFor(peer), owner)) return true;
  Count(tls::TlsFailure::k_internal);  // the library could not make an SSL object
  return false;
}

ClientKey TlsTransportFactory::ClientKeyFor(const std::array<uint8_t, 16>& peer) const {
  return ClientKeyOf(peer, prefix_v4_, prefix_v6_);
}

bool TlsTransportFactory::AdmitRate(const ClientKey& client, bool resumption) {
  return limiter_ == nullptr || limiter_->Admit(client, resumption, MonotonicNanos());
}

bool TlsTransportFactory::MakeRoomFor(TlsTransport& transport) {
  if (room_ == nullptr) return true;
  const WaitingRoom::Entry* self = &transport.room_entry();
  if (!room_->ClientMayHoldAnother(transport.client(), self)) return false;
  EvictOldest(self);
  return true;
}

bool TlsTransportFactory::MayWait(TlsTransport& transport) {
  // A ClientHello that came in pieces parks before it was asked (one that came whole was asked
  // at the hello: MakeRoomFor): its prefix holding its share, it is refused, to retry later.
  if (room_ == nullptr || !transport.handshaking() ||
      room_->ClientMayHoldAnother(transport.client(), &transport.room_entry())) {
    return true;
  }
  Count(tls::TlsFailure::k_limit);
  return false;
}

void TlsTransportFactory::Parked(TlsTransport& transport) {
  WaitingRoom::Entry& entry = transport.room_entry();
  if (room_ == nullptr || entry.in_room == transport.handshaking()) return;
  if (!transport.handshaking()) {
    room_->Remove(entry);
    return;
  }
  // A full room makes space from the handshake that has waited longest: a stalled client
  // cannot keep a new one out (MakeRoomFor did so already for a hello that came whole).
  EvictOldest(&entry);
  room_->Add(entry, transport.client());
}

void TlsTransportFactory::Ended(TlsTransport& transport) {
  if (room_ != nullptr) room_->Remove(transport.room_entry());
}

void TlsTransportFactory::TimedOut(TlsTransport& transport) {
  if (transport.handshaking()) Count(tls::TlsFailure::k_timeout);
}

void TlsTransportFactory::EvictOldest(const WaitingRoom::Entry* self) {
  while (room_->FullWithout(self)) {
    WaitingRoom::Entry* oldest = room_->Oldest(self);
    if (oldest == nullptr || host_ == nullptr) return;
    Count(tls::TlsFailure::k_evicted);
    host_->Evict(oldest->owner);  // its Ended takes it out of the room
  }
}

}  // namespace onepass
