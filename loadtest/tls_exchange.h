// One DNS-over-TLS connection (RFC 7858) of the load tester as a state machine that performs
// no I/O: TLS on memory BIOs between the driver (the epoll core, epoll_client.h; a test) and the
// DNS exchange (exchange.h), which frames and judges the plaintext exactly as over TCP (RFC 7858
// §3.3: the same 2-byte length prefix, inside TLS).
//
//   Begin -> [TCP connecting] -> OnConnected(0): ClientHello in unsent()
//         -> OnReceived(server flight) ... handshake done: the client's Finished and the
//            query leave together in unsent() -> OnReceived(answer) ... -> ended
//
// A handshake that fails counts once as tls_verify or tls_handshake (a timeout or a reset
// during it as those kinds), with OpenSSL's reason; after it, a TLS failure is tls_error. A
// connection that succeeded leaves close_notify in unsent() (RFC 8446 §6.1) for the driver's
// last send. Not thread-safe; one per connection slot of one thread.
#ifndef ONEPASS_LOADTEST_TLS_EXCHANGE_H_
#define ONEPASS_LOADTEST_TLS_EXCHANGE_H_

#include <openssl/ssl.h>

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "loadtest/exchange.h"
#include "loadtest/thread_stats.h"
#include "loadtest/tls_client_context.h"

namespace onepass::load {

class TlsExchange {
 public:
  // `context`, `tickets`, `stats`: not owned, outlive the machine (the thread's).
  TlsExchange(const TlsClientContext* context, TicketStore* tickets, Exchange exchange,
              ThreadStats* stats)
      : context_(context), tickets_(tickets), exchange_(std::move(exchange)), stats_(stats) {}
  ~TlsExchange();
  TlsExchange(TlsExchange&& other) = delete;
  TlsExchange& operator=(TlsExchange&& other) = delete;

  // A new connection (counts it started; chooses whether it offers a ticket).
  void Begin(int64_t origin_ns, int64_t now_ns);

  bool active() const { return exchange_.active(); }
  bool succeeded() const { return exchange_.succeeded(); }
  bool handshake_done() const { return phase_ == Phase::kOpen; }
  bool offered_ticket() const { return offered_ticket_; }
  // Ciphertext to send now; empty when nothing waits. Valid until the next call.
  absl::string_view unsent() const { return absl::string_view(out_).substr(out_offset_); }

  // The driver's reports, as Exchange's; bytes are ciphertext. Ignored once ended.
  void OnConnected(int error, int64_t now_ns);
  void OnSent(size_t bytes, int64_t now_ns);
  void OnReceived(absl::string_view bytes, int64_t now_ns);
  void OnPeerClosed(int64_t now_ns);
  void OnError(int error, int64_t now_ns);
  void OnTimeout(int64_t now_ns);

  // From the context's new-session callback: a ticket for the thread's store.
  void KeepSession(SSL_SESSION* session) { tickets_->Keep(session); }

 private:
  enum class Phase { kIdle, kConnecting, kHandshaking, kOpen };

  void Handshake(int64_t now_ns);
  void HandshakeDone(int64_t now_ns);
  // Encrypts what the exchange has to send, decrypts what has come (answers, tickets).
  void Pump(int64_t now_ns);
  // A failed SSL call (`result` of SSL_get_error) ends the connection with its kind.
  void FailSsl(int result, int64_t now_ns);
  void Fail(ErrorKind kind, const char* reason, const std::string& detail, int64_t now_ns);
  void AfterEnd(int64_t now_ns);  // counts a failed handshake; queues close_notify after success
  void DrainOutput();

  const TlsClientContext* context_;
  TicketStore* tickets_;
  Exchange exchange_;
  ThreadStats* stats_;

  Phase phase_ = Phase::kIdle;
  SSL* ssl_ = nullptr;
  BIO* in_ = nullptr;       // server -> client, owned by ssl_
  BIO* out_bio_ = nullptr;  // client -> server, owned by ssl_
  bool offered_ticket_ = false;
  bool ended_ = false;
  int64_t origin_ns_ = 0;
  int64_t handshake_done_ns_ = 0;
  std::string out_;  // ciphertext not yet sent, from out_offset_
  size_t out_offset_ = 0;
  std::string plain_;  // room for the decrypted bytes of one SSL_read
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_TLS_EXCHANGE_H_
