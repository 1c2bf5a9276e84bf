#include "server/transport/raw_transport.h"

#include <cerrno>

#include "server/tls/tls_record.h"

namespace onepass {

Intake RawTransport::TakeReceived(size_t n, InputBuffer& input, SendPath& send) {
  const bool first_bytes = !seen_bytes_;
  seen_bytes_ = true;
  input.Commit(n);
  // As a DNS length prefix a ClientHello would announce a 5,635-byte query whose flags carry
  // RCODE 1, and it is no text protocol's request (server/tls/tls_record.h).
  if (first_bytes && tls::StartsWithClientHello(input.contents())) return Intake::kWrongProtocol;
  return Intake::kInput;
}

Flushed RawTransport::Flush(OutputBuffer& out, bool closing, SendPath& send) {
  // The last response of a connection that closes at once (the single pass): MSG_MORE holds its
  // tail segment back until the close() that follows, which sends it with the FIN in one
  // segment instead of two (one fewer packet to send, receive and acknowledge per connection).
  // Only when the close follows the send at once (SendPath::MayCorkWithClose: below the size
  // at which the connection waits for the kernel to send its answers first).
  const bool last = closing && send.MayCorkWithClose(out.pending());
  while (!out.empty()) {
    // The whole response in one send: the handler built the length prefix and the message
    // together, so no tinygram leaves (RFC 7766 §8; docs/design.md "The connection path").
    // A response with a body (OutputBuffer::AttachBody) is its head, corked so that it fills
    // the body's first segment, then the body from the handler's snapshot.
    const size_t front = out.front().size();
    const ssize_t sent = out.size() > 0
                             ? send.SendBytes(out.contents(), last, /*body_follows=*/out.has_body())
                             : send.SendBody(out, last);
    if (sent == -EAGAIN || sent == -EWOULDBLOCK) return Flushed::kWouldBlock;
    if (sent < 0) return Flushed::kSendError;
    out.ConsumeFront(static_cast<size_t>(sent));
    if (static_cast<size_t>(sent) < front) return Flushed::kWouldBlock;  // the buffer is full
  }
  return Flushed::kAll;
}

}  // namespace onepass
