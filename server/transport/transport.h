// A connection's transport: what lies between its socket and its handler's plaintext (Envoy's
// TransportSocket). The connection (server/core/connection.h) runs one state machine for every
// connection and asks its transport, at each step that touches bytes, what the socket's bytes
// mean and how the handler's answer goes out:
//   - RawTransport (raw_transport.h): plain TCP, the bytes are the request; adds nothing to the
//     single pass (recv into the request buffer, one send).
//   - TlsTransport (tls/tls_transport.h): TLS (DNS over TLS, HTTPS): ciphertext in its own
//     buffer, the handshake, records out, close_notify riding with the last answer.
// A transport never calls the socket itself: it receives what the connection's recv brought and
// sends through the connection's SendPath (counted, corked, or queued with the close by the
// driver). It keeps no pointer to its connection, so a connection slot keeps its transport from
// one connection to the next (the library's objects keep their memory).
//
// Thread-confined to the worker that owns the connection.
#ifndef ONEPASS_SERVER_TRANSPORT_TRANSPORT_H_
#define ONEPASS_SERVER_TRANSPORT_TRANSPORT_H_

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/types/span.h"
#include "handlers/output_buffer.h"
#include "server/transport/input_buffer.h"

namespace onepass {

// How a connection sends, as its transport sees it (Connection implements it).
class SendPath {
 public:
  virtual ~SendPath() = default;
  // One send of `bytes`. `last`: nothing follows before the close (corked so that the tail
  // leaves with the FIN, or taken by the driver together with the close); `body_follows`: a
  // head corked for the body sent after it. Bytes taken, or -errno.
  virtual ssize_t SendBytes(absl::Span<const uint8_t> bytes, bool last,
                            bool body_follows = false) = 0;
  // One send of the rest of `out`'s attached body (OutputBuffer::AttachBody): sendfile(2) from
  // its file when it has one. Bytes taken, or -errno.
  virtual ssize_t SendBody(const OutputBuffer& out, bool last) = 0;
  // Whether `bytes` more may be the connection's last send, corked with its close: the close
  // follows at once (no lingering) and the connection will not wait for the kernel to send its
  // answers first (server/core/connection_state.h kClosingUnsent: below kUnsentCheckBytes in
  // all). Asked only for a flush that is `closing`.
  virtual bool MayCorkWithClose(size_t bytes) const = 0;
};

// What the socket's bytes became (Transport::TakeReceived, Transport::Decode).
enum class Intake : uint8_t {
  kInput,          // request bytes were appended to the input: the handler runs next
  kNeedMore,       // nothing for the handler yet (a record in pieces, a handshake): recv again
  kPeerClosed,     // the peer says it sends nothing more (TLS close_notify): as a TCP EOF
  kFailed,         // the transport failed (counted by it, its alert sent): close
  kWrongProtocol,  // a TLS ClientHello on a plain listener: close at once (counted)
  kNoRoom,         // the input is full (cannot happen with capacity > max request): close
};

// How a flush ended (Transport::Flush).
enum class Flushed : uint8_t {
  kAll,         // everything handed over (and what the transport owed)
  kWouldBlock,  // the socket buffer is full: wait until writable
  kSendError,   // the send failed (the client reset): close, counted as a reset
  kFailed,      // the transport failed (counted by it): close
};

// What a transport must do before its connection's next recv.
enum class Owed : uint8_t {
  kNothing,
  kDecode,  // received bytes, or plaintext the library holds, to hand over without a recv
  kSend,    // bytes it owes the peer before the peer sends on (a handshake flight, a ticket)
};

class Transport {
 public:
  virtual ~Transport() = default;

  // Where the connection's next recv writes: the input's free space, or a buffer of its own.
  virtual absl::Span<uint8_t> ReceiveTail(InputBuffer& input) = 0;
  // A recv put `n` > 0 bytes into ReceiveTail.
  virtual Intake TakeReceived(size_t n, InputBuffer& input, SendPath& send) = 0;
  virtual Owed owed() const = 0;
  // Owed::kDecode: hands over what it holds.
  virtual Intake Decode(InputBuffer& input, SendPath& send) { return Intake::kNeedMore; }
  // Sends what it owes, then `out` (which it consumes). `closing`: nothing follows on this
  // connection (what a transport ends with rides with the last bytes: TLS close_notify).
  virtual Flushed Flush(OutputBuffer& out, bool closing, SendPath& send) = 0;
  // A PROXY v2 header (server/core/proxy_protocol.h), which precedes the transport, named the
  // client and left `input` holding what followed it: that is the transport's first bytes.
  virtual void AfterProxyHeader(InputBuffer& input, const std::array<uint8_t, 16>& client) {}
  // Before an idle connection is closed: what the transport says at its end (TLS
  // close_notify), in one send at most (the client may be gone).
  virtual void SayClosing(SendPath& send) {}

  // The request bytes are encrypted on the wire (RequestContext::encrypted).
  virtual bool encrypted() const { return false; }
  // A handshake is in progress: the connection waits for its client's next flight.
  virtual bool handshaking() const { return false; }
  // Parked idle between requests, nothing buffered: gives back memory its next bytes do not
  // need (TLS: the library's record buffers).
  virtual void ReleaseIdleBuffers() {}

  // The admission of the listener's transports (TLS: the handshake room), as the worker core
  // parks and closes the connection. MayWait: the connection is about to park mid-handshake;
  // false refuses it (counted by the transport). Parked/Ended: it parked / ended. TimedOut: a
  // deadline closes it.
  virtual bool MayWait() { return true; }
  virtual void Parked() {}
  virtual void Ended() {}
  virtual void TimedOut() {}
  // Between connections: frees the library's objects (memory back, or an old certificate's
  // key let go after a reload); Stale: only when they belong to a replaced configuration.
  virtual void Release() {}
  virtual void ReleaseIfStale() {}
};

// A worker's source of the transports of one kind of listener (one TlsTransports per worker for
// --tls-listen's). Plain listeners need none: every connection has a RawTransport of its own.
class TransportFactory {
 public:
  virtual ~TransportFactory() = default;
  // A new transport for a connection slot; Start is called for each of its connections.
  virtual std::unique_ptr<Transport> Make() = 0;
  // `transport` (made by Make) begins a connection from `peer` (IPv4 as v4-mapped IPv6);
  // `owner` is the core's handle of the connection, given back to the worker when the
  // admission evicts it (TransportHost::Evict). False: it cannot (counted), close.
  virtual bool Start(Transport& transport, const std::array<uint8_t, 16>& peer, void* owner) = 0;
};

// What a transport's admission may ask of its worker core.
class TransportHost {
 public:
  virtual ~TransportHost() = default;
  // Closes the parked connection `owner` (TransportFactory::Start) to make room for another
  // (already counted by the caller).
  virtual void Evict(void* owner) = 0;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_TRANSPORT_TRANSPORT_H_
