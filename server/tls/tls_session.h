// One TLS connection on the server side, over memory: no socket, no clock, no thread of its
// own. The caller (the worker's connection, between its I/O driver and the handler) moves the
// bytes; this turns ciphertext into plaintext and back. Handlers never see it.
//
// How a caller drives it, per connection:
//   1. session.Start(context, stats) when the connection is accepted (the slot's session is
//      reused: its SSL object is cleared, not freed, while the context stays the same).
//   2. Each recv: r = session.Feed(received, plaintext_room).
//      - Send all of session.Pending() (the server's first flight, a ticket, an alert) and
//        session.ConsumePending(sent) before waiting for more input, whatever r says: on
//        kFailed it holds the alert. With plaintext, it may wait for the answer and leave
//        with it (server/core/connection.cc does: ticket, answer and close_notify in one send).
//      - r.plaintext bytes were written to the front of plaintext_room: append them to the
//        connection's input and call Handler::Process as for plain TCP.
//      - r.consumed < received.size() only when plaintext_room filled up: keep the rest and
//        Feed it again (Feed({}, room) also drains plaintext the library still holds).
//      - kNeedMore: recv again (the caller bounds the handshake in time: the worker's read
//        deadline covers the handshake and the first request together).
//      - kFailed: count failure() (the session already counted it in TlsStats), send what is
//        pending (the alert) and close. kPeerClosed: the client sent close_notify.
//   3. The handler's response: session.Encrypt(response, /*close_notify=*/true) for
//      kWriteThenClose, so the answer and close_notify leave in ONE send of Pending(), then
//      close(2). The response goes into one TLS record when it fits (16 KiB of plaintext).
// A handshake that completes in the Feed that carries the client's Finished and its query
// gives the plaintext in that same call: recv, Feed, Process, Encrypt, send, close.
//
// Thread-confined to the worker that owns the slot. Memory: the SSL object and the pending
// output buffer belong to the slot and keep their capacity from one connection to the next.
#ifndef ONEPASS_SERVER_TLS_TLS_SESSION_H_
#define ONEPASS_SERVER_TLS_TLS_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "server/tls/handshake_gate.h"
#include "server/tls/tls_engine.h"
#include "server/tls/tls_record.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_stats.h"

namespace onepass::tls {

enum class TlsResult {
  kNeedMore,    // nothing for the handler yet: recv more (after sending Pending())
  kPlaintext,   // FeedResult::plaintext > 0 bytes for the handler
  kPeerClosed,  // the client sent close_notify (plaintext before it may come with it)
  kFailed,      // failure() says why; send Pending() (an alert, perhaps) and close
};

struct FeedResult {
  TlsResult result = TlsResult::kNeedMore;
  size_t consumed = 0;   // ciphertext bytes taken from the front of the input
  size_t plaintext = 0;  // bytes written at the front of the plaintext room
};

// Library-neutral: the buffers and their limits, the first record's header check, the
// counters and the failure's classification are here; the handshake and the records are its
// context's engine's (tls_engine.h: OpenSSL's in openssl/).
class TlsSession final : private EngineIo {
 public:
  TlsSession();
  ~TlsSession() override;
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  // Begins a new connection under `context`, counting into `stats` (which must outlive the
  // connection). Keeps the previous connection's SSL object (SSL_clear) when the context is
  // the same one, otherwise makes a new one (after a reload). False when OpenSSL cannot
  // allocate one: close the connection.
  // `gate` (may be null: all admitted) is asked before each handshake's costly half; it must
  // outlive the connection too.
  bool Start(const std::shared_ptr<const TlsServerContext>& context, TlsStats* stats,
             HandshakeGate* gate = nullptr);

  // Frees the SSL object and lets go of the context: for an idle slot after a reload (else it
  // keeps the old certificate and keys alive until its next Start) or to give memory back.
  // The next Start makes a new SSL object.
  void Release();
  // The context the session holds (its last Start's), or null after Release.
  const TlsServerContext* context() const { return context_.get(); }

  // Between requests of a kept-alive connection (nothing pending, no plaintext held): gives
  // back the library's record buffers (SSL_free_buffers, about 34 KiB; allocated again by the
  // next record) and the pending output's capacity, so that a crowd of idle DoT connections
  // holds only the SSL object's state. True when the library's buffers were freed.
  bool ReleaseIdleBuffers();

  // Takes ciphertext the client sent; see the header comment for what to do with the result.
  FeedResult Feed(absl::Span<const uint8_t> ciphertext, absl::Span<uint8_t> plaintext);

  // Encrypts `plaintext` (the whole response; one record up to 16 KiB) onto Pending(), and
  // close_notify after it when `close_notify`. Requires handshake_done(). False (and kFailed
  // from then on) if it would exceed TlsConfig::max_output_bytes or the library fails.
  bool Encrypt(absl::Span<const uint8_t> plaintext, bool close_notify);
  // Only close_notify (RFC 8446 §6.1), e.g. before closing a kept-alive connection.
  bool Close() { return Encrypt({}, true); }

  // Ciphertext waiting to be sent, oldest first; valid until the next call on the session.
  absl::Span<const uint8_t> Pending() const {
    return {out_.data() + out_sent_, out_.size() - out_sent_};
  }
  // `n` <= Pending().size() bytes were sent.
  void ConsumePending(size_t n);

  // Plaintext the library decrypted but Feed could not hand over (its room filled): the next
  // Feed, even of no ciphertext, gives it.
  bool holds_plaintext() const;
  bool handshake_done() const { return handshake_done_; }
  bool resumed() const { return resumed_; }  // valid once handshake_done()
  bool failed() const { return failure_ != TlsFailure::kNone; }
  TlsFailure failure() const { return failure_; }
  // The ALPN protocol selected ("dot"), empty when the client offered none.
  absl::string_view alpn() const;
  // TLS1_3_VERSION (0x0304) or TLS1_2_VERSION once handshake_done(); 0 before.
  int version() const;

 private:
  // EngineIo: the engine reads the current Feed's ciphertext and writes to Pending().
  size_t ReadCiphertext(uint8_t* data, size_t size) override;
  bool WriteCiphertext(const uint8_t* data, size_t size) override;
  bool CheckRecordHeader(absl::Span<const uint8_t> ciphertext);
  void CompleteHandshake();
  TlsFailure Classify(EngineStep step) const;
  FeedResult Fail(TlsFailure failure, size_t consumed);

  std::shared_ptr<const TlsServerContext> context_;
  TlsStats* stats_ = nullptr;
  SessionHooks hooks_;  // what the engine's callbacks count into and ask
  // The engine's state for this slot, made by the context's engine and reused while the
  // context stays the same.
  std::unique_ptr<EngineSession> engine_;
  // The ciphertext of the current Feed, read by the engine (ReadCiphertext).
  absl::Span<const uint8_t> in_;
  size_t in_read_ = 0;
  // Pending output, appended by the engine (WriteCiphertext); out_sent_ bytes of it are sent.
  std::vector<uint8_t> out_;
  size_t out_sent_ = 0;
  bool output_overflow_ = false;
  size_t handshake_bytes_ = 0;  // ciphertext fed before the handshake completed
  size_t header_seen_ = 0;      // bytes of the first record header checked (up to 3)
  bool handshake_done_ = false;
  bool resumed_ = false;
  TlsFailure failure_ = TlsFailure::kNone;
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_SESSION_H_
