// The load tester's TLS client side for --proto dot (DNS over TLS, RFC 7858): the OpenSSL
// context every thread shares, and each thread's store of session tickets to resume with
// (--tls-resume). Shares no code with the server's TLS layer (server/tls/), so a mistake there
// cannot hide itself here.
#ifndef ONEPASS_LOADTEST_TLS_CLIENT_CONTEXT_H_
#define ONEPASS_LOADTEST_TLS_CLIENT_CONTEXT_H_

#include <openssl/ssl.h>

#include <deque>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace onepass::load {

struct TlsClientOptions {
  std::string ca_file;    // verify the server's chain against these CAs (PEM)
  bool insecure = false;  // or verify nothing (--tls-insecure)
  std::string sni;        // server_name sent, and the name the certificate must carry; "": none
  double resume_fraction = 0;  // share of connections that offer a ticket, 0..1
};

// The newest error of this thread's OpenSSL queue in words (its code in `code` when given, 0
// when the queue was empty); the queue is cleared.
std::string TakeOpenSslError(unsigned long* code = nullptr);

// Immutable after Create; SSL_new on it is thread-safe, so one serves every client thread.
class TlsClientContext {
 public:
  static absl::StatusOr<std::unique_ptr<TlsClientContext>> Create(const TlsClientOptions& options);
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  SSL_CTX* ctx() const { return ctx_; }
  const TlsClientOptions& options() const { return options_; }

  // The SSL ex_data slot holding the connection's owner, which the new-session callback
  // hands each ticket to (TlsExchange::KeepSession).
  static int OwnerIndex();

 private:
  explicit TlsClientContext(const TlsClientOptions& options) : options_(options) {}

  TlsClientOptions options_;
  SSL_CTX* ctx_ = nullptr;
};

// One thread's tickets, each offered once (RFC 8446 §C.4: reuse would let an observer link
// the connections, and a server may refuse it), the newest first; a connection that resumes
// gets a new one (RFC 8446 §4.6.1), so a steady share can resume. At most kMaxTickets kept:
// the oldest go first.
class TicketStore {
 public:
  static constexpr size_t kMaxTickets = 64;

  explicit TicketStore(double fraction) : fraction_(fraction) {}
  ~TicketStore();
  TicketStore(const TicketStore&) = delete;
  TicketStore& operator=(const TicketStore&) = delete;

  // For the next connection: a ticket to offer (the caller owns it now), or null. A share
  // `fraction` of the calls get one, evenly spread; a call that finds none keeps its turn for
  // the next call that does.
  SSL_SESSION* NextOffer();
  // A ticket the server sent; the store takes the reference.
  void Keep(SSL_SESSION* session);
  size_t size() const { return tickets_.size(); }

 private:
  double fraction_;
  double credit_ = 0;
  std::deque<SSL_SESSION*> tickets_;  // the newest at the back
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_TLS_CLIENT_CONTEXT_H_
