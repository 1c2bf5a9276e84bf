#include "server/transport/tls/tls_transport.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "server/transport/tls/tls_transport_factory.h"

namespace onepass {

bool TlsTransport::Begin(const std::shared_ptr<const tls::TlsServerContext>& context,
                         tls::TlsStats* stats, const ClientKey& client, void* owner) {
  ciphertext_.Clear();
  client_ = client;
  room_entry_.owner = owner;
  room_asked_ = false;
  return session_.Start(context, stats, this);
}

Owed TlsTransport::owed() const {
  // Ciphertext left when the plaintext room filled, or plaintext the library holds: no recv.
  if (!ciphertext_.empty() || session_.holds_plaintext()) return Owed::kDecode;
  // Before waiting for the client, what the layer owes it (the server's handshake flight, a
  // session ticket) goes out: the client waits for it before sending on.
  if (!session_.Pending().empty()) return Owed::kSend;
  return Owed::kNothing;
}

Intake TlsTransport::TakeReceived(size_t n, InputBuffer& input, SendPath& send) {
  ciphertext_.Commit(n);
  return Decode(input, send);
}

Intake TlsTransport::Decode(InputBuffer& input, SendPath& send) {
  absl::Span<uint8_t> room = input.WritableTail();
  if (room.empty()) return Intake::kNoRoom;
  const tls::FeedResult fed = session_.Feed(ciphertext_.contents(), room);
  ciphertext_.Consume(fed.consumed);
  input.Commit(fed.plaintext);
  switch (fed.result) {
    case tls::TlsResult::kPlaintext:
      return Intake::kInput;
    case tls::TlsResult::kPeerClosed:
      return Intake::kPeerClosed;  // close_notify: the client sends nothing more (§6.1)
    case tls::TlsResult::kNeedMore:
      // Feed takes all it is given unless its room fills; anything left would loop.
      if (fed.consumed == 0 && !ciphertext_.empty()) return Intake::kFailed;
      return Intake::kNeedMore;
    case tls::TlsResult::kFailed:
      break;
  }
  // Failed (counted by cause in TlsStats): the alert, if the session made one, in one send at
  // most; the client may already be gone.
  if (!session_.Pending().empty()) send.SendBytes(session_.Pending(), /*last=*/false);
  return Intake::kFailed;
}

Flushed TlsTransport::Flush(OutputBuffer& out, bool closing, SendPath& send) {
  for (;;) {
    // The response a record at a time, each added to what the session holds (the ticket of a
    // handshake just completed) unless a record's worth already waits: the single pass sends
    // ticket, answer and close_notify in one send, and the session never holds much more than
    // one record of a big response (an AXFR, pipelined answers).
    // A body (OutputBuffer::AttachBody) is encrypted from where the snapshot keeps it, a
    // record at a time like the rest: without kernel TLS it cannot go by sendfile.
    while (!out.empty() && session_.Pending().size() < kTlsRecordPlaintext) {
      const absl::Span<const uint8_t> front = out.front();
      // A record ends where a message does (OutputBuffer::EndMessage): a DoT stub reads one
      // message per record. The records of pipelined answers still leave in one send.
      const size_t message = out.size() > 0 ? out.FrontMessageBytes() : front.size();
      const size_t take = std::min({front.size(), kTlsRecordPlaintext, message});
      if (!session_.Encrypt(front.first(take), closing && take == out.pending())) {
        return Flushed::kFailed;  // counted by cause in TlsStats
      }
      out.ConsumeFront(take);
    }
    const absl::Span<const uint8_t> pending = session_.Pending();
    if (pending.empty()) return Flushed::kAll;  // and the response is all encrypted
    // Corked to leave with the FIN when it is the last (as plain TCP's last send).
    const bool last = closing && out.empty() && send.MayCorkWithClose(pending.size());
    const ssize_t sent = send.SendBytes(pending, last);
    if (sent == -EAGAIN || sent == -EWOULDBLOCK) return Flushed::kWouldBlock;
    if (sent < 0) return Flushed::kSendError;
    session_.ConsumePending(static_cast<size_t>(sent));
    if (static_cast<size_t>(sent) < pending.size()) return Flushed::kWouldBlock;  // full
  }
}

void TlsTransport::AfterProxyHeader(InputBuffer& input, const std::array<uint8_t, 16>& client) {
  // The client's handshakes are charged to the prefix its header named.
  client_ = factory_->ClientKeyFor(client);
  // The bytes after the header are the TLS handshake: they go to the session, not the handler.
  const absl::Span<uint8_t> tail = ciphertext_.WritableTail();
  const size_t take = std::min(tail.size(), input.size());
  std::copy_n(input.contents().data(), take, tail.data());
  ciphertext_.Commit(take);
  input.Clear();
}

void TlsTransport::SayClosing(SendPath& send) {
  if (!session_.handshake_done()) return;
  if (!session_.Pending().empty() || !session_.Close()) return;
  send.SendBytes(session_.Pending(), /*last=*/false);
}

bool TlsTransport::Admit(bool resumption) {
  if (!factory_->AdmitRate(client_, resumption)) return false;
  // A second question for the same hello (its ticket was of an unknown key) asks the rate
  // only: the room was made for it already.
  if (std::exchange(room_asked_, true)) return true;
  return factory_->MakeRoomFor(*this);
}

bool TlsTransport::MayWait() { return factory_->MayWait(*this); }
void TlsTransport::Parked() { factory_->Parked(*this); }
void TlsTransport::Ended() { factory_->Ended(*this); }
void TlsTransport::TimedOut() { factory_->TimedOut(*this); }

void TlsTransport::ReleaseIfStale() {
  if (session_.context() != factory_->context()) session_.Release();
}

}  // namespace onepass
