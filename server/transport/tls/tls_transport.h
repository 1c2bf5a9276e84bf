// TLS as a Transport (server/transport/transport.h): DNS over TLS (RFC 7858) and HTTPS on the
// --tls-listen sockets. The connection's recv brings ciphertext into this transport's own
// buffer; the session (server/tls/tls_session.h) turns it into the request bytes the handler
// sees, and the handler's answer into records, a record per message (a DoT stub reads one
// message per record), the records of pipelined answers in one send, close_notify riding with
// the last. The handler never knows.
//
// Owned by a connection slot and reused from one connection to the next: the SSL object and
// both buffers keep their memory. Its admission (the handshake room and budgets) is its
// factory's (tls_transport_factory.h).
#ifndef ONEPASS_SERVER_TRANSPORT_TLS_TLS_TRANSPORT_H_
#define ONEPASS_SERVER_TRANSPORT_TLS_TLS_TRANSPORT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "server/core/client_limits.h"
#include "server/core/waiting_room.h"
#include "server/tls/handshake_gate.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_session.h"
#include "server/transport/input_buffer.h"
#include "server/transport/transport.h"

namespace onepass {

class TlsTransportFactory;

// Ciphertext one recv may bring: a whole TLS record (RFC 8446 §5.2: 2^14 bytes of plaintext
// plus at most 256 of expansion, and the 5-byte header) with room to spare, so that the
// ClientHello, or the client's Finished with its query, comes in one recv.
inline constexpr size_t kTlsReceiveBytes = 18 * 1024;
// Plaintext encrypted per record when sending (the TLS maximum): what waits unsent in the
// session beyond its handshake flight is bounded by one record, whatever the response size.
inline constexpr size_t kTlsRecordPlaintext = 16 * 1024;

class TlsTransport final : public Transport, public tls::HandshakeGate {
 public:
  explicit TlsTransport(TlsTransportFactory* factory)
      : factory_(factory), ciphertext_(kTlsReceiveBytes) {}

  // Transport.
  absl::Span<uint8_t> ReceiveTail(InputBuffer& input) override {
    return ciphertext_.WritableTail();  // an empty buffer: never zero
  }
  Intake TakeReceived(size_t n, InputBuffer& input, SendPath& send) override;
  Owed owed() const override;
  Intake Decode(InputBuffer& input, SendPath& send) override;
  Flushed Flush(OutputBuffer& out, bool closing, SendPath& send) override;
  void AfterProxyHeader(InputBuffer& input, const std::array<uint8_t, 16>& client) override;
  void SayClosing(SendPath& send) override;
  bool encrypted() const override { return true; }
  bool handshaking() const override { return !session_.handshake_done(); }
  void ReleaseIdleBuffers() override {
    if (ciphertext_.empty()) session_.ReleaseIdleBuffers();
  }
  bool MayWait() override;
  void Parked() override;
  void Ended() override;
  void TimedOut() override;
  void Release() override { session_.Release(); }
  void ReleaseIfStale() override;

  // HandshakeGate: the ClientHello asks the factory's admission, before any TLS work.
  bool Admit(bool resumption) override;

  // The factory's side.
  bool Begin(const std::shared_ptr<const tls::TlsServerContext>& context, tls::TlsStats* stats,
             const ClientKey& client, void* owner);
  const tls::TlsSession& session() const { return session_; }
  WaitingRoom::Entry& room_entry() { return room_entry_; }
  const ClientKey& client() const { return client_; }

 private:
  TlsTransportFactory* const factory_;
  tls::TlsSession session_;
  // Received, not yet fed: only what Feed left when the plaintext room filled.
  InputBuffer ciphertext_;
  ClientKey client_{};             // the peer's prefix (the one a PROXY header named, if any)
  WaitingRoom::Entry room_entry_;  // in the factory's handshake room while parked handshaking
  bool room_asked_ = false;        // the room was asked for this connection's hello
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_TRANSPORT_TLS_TLS_TRANSPORT_H_
