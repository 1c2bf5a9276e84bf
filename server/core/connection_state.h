// The states of a connection (server/core/connection.h), named so that a reader can trace one by
// reading a single switch: Connection::Advance.
//
// Transitions, each a step of Advance:
//   kProxyHeader → kProcessing (header taken, request bytes follow) | kReading (header alone)
//                 | kProxyHeader (more bytes needed) | kClosed (rejected, error, oversize)
//   kReading    → kProcessing (bytes or the client's EOF received) | kClosed (error, oversize)
//   kProcessing → kWriting (a response) | kProcessing (more whole requests buffered)
//                 | kReading (the handler needs more bytes) | kClosed
//   kWriting    → kReading (sent; keep reading) | kProcessing (sent; input left over)
//                 | kLingering (sent; the client may still be sending)
//                 | kClosingUnsent (sent to the kernel, which cannot send it on) | kClosed
//   kClosingUnsent → kLingering | kClosed (the kernel sent it all) ; aborted at the deadline
//   kLingering  → kClosed (the client's EOF, an error, the byte bound or the linger deadline)
//   kProcessing → kWaitingUpstream (requests forwarded, nothing to send yet)
//   kWriting    → kWaitingUpstream (sent; answers still to come)
//   kWaitingUpstream → kWriting (an upstream answer arrived) ; closed at the backstop deadline
//
// Advance returns only a state the connection waits in (kProxyHeader, kReading, kWriting,
// kClosingUnsent, kLingering, kWaitingUpstream) or kClosed; kProcessing lasts only within one
// Advance call.
#ifndef ONEPASS_SERVER_CORE_CONNECTION_STATE_H_
#define ONEPASS_SERVER_CORE_CONNECTION_STATE_H_

#include <cstdint>

namespace onepass {

enum class ConnectionState : uint8_t {
  // A --proxy-protocol-from connection's first state (server/core/proxy_protocol.h; dnsdist's
  // readingProxyProtocolHeader): reads and takes the PROXY v2 header of a trusted peer (or
  // finds there is none) before any byte reaches the handler. Parked like kReading.
  kProxyHeader,
  // Waits for request bytes: a fresh connection, an incomplete request, or (kept alive) the
  // next request. Parked: readable event with the read (or keepalive idle) deadline.
  kReading,
  // Input is buffered that the handler has not seen (just received, or left when the handler
  // stopped early): Handler::Process runs next. Never parked.
  kProcessing,
  // A response is in the output buffer, not yet sent whole. Parked when the socket buffer is
  // full: writable event with the write deadline. Nothing is read meanwhile (backpressure).
  kWriting,
  // The last response is sent and the write side shut down, but the client may still be
  // sending (the handler answered kWriteThenClose with request bytes left over, e.g. an HTTP
  // 413/431 before the body was read). close() with unread data makes the kernel send RST,
  // which can destroy the response before the client reads it (RFC 9112 §9.6; nginx
  // lingering_close). So input is read and discarded, up to kLingerMaxBytes, until the
  // client's EOF; parked: readable event with one deadline of --linger-ms for the whole linger.
  kLingering,
  // The last response was taken by the kernel whole, but the client has not let it be sent
  // (it does not read: its receive window is shut). Closing now would orphan the socket and
  // leave the kernel holding the unsent bytes for as long as the client keeps acknowledging
  // (hundreds of KB per connection with pipelined queries). So the connection waits, writable
  // with TCP_NOTSENT_LOWAT, until the kernel has sent it all, then closes (or lingers); at the
  // write deadline it is aborted (RST), which frees the buffers (counted: unread_aborts).
  // Entered only by a connection that sent more than kUnsentCheckBytes: the single pass of one
  // small answer pays no extra syscall.
  kClosingUnsent,
  // A forwarding handler sent requests to upstream servers (Action::kWaitUpstream) and the
  // connection waits for their answers, neither reading nor writing its own socket (nothing
  // more is read from a client with answers outstanding: backpressure). Parked with no socket
  // event: the worker wakes it with each answer (Connection::DeliverUpstream, → kWriting), the
  // handler's deadline guarantees one per request, and a backstop timer closes it should the
  // answers never come (a reload dropped the handler's in-flight table).
  kWaitingUpstream,
  // Done: the caller closes the socket (counters are already updated).
  kClosed,
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_CONNECTION_STATE_H_
