#include "loadtest/tls_client_context.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "loadtest/tls_exchange.h"

namespace onepass::load {
namespace {

// TLS 1.3 tickets come after the handshake (RFC 8446 §4.6.1), one or more per connection;
// each goes to the thread's TicketStore through the connection's owner.
int OnNewSession(SSL* ssl, SSL_SESSION* session) {
  auto* owner = static_cast<TlsExchange*>(SSL_get_ex_data(ssl, TlsClientContext::OwnerIndex()));
  if (owner == nullptr) return 0;  // not taken: OpenSSL frees it
  owner->KeepSession(session);
  return 1;
}

}  // namespace

std::string TakeOpenSslError(unsigned long* code) {
  const unsigned long newest = ERR_peek_last_error();
  if (code != nullptr) *code = newest;
  std::string text = "unknown OpenSSL error";
  if (newest != 0) {
    char buffer[256];
    ERR_error_string_n(newest, buffer, sizeof(buffer));
    text = buffer;
  }
  ERR_clear_error();
  return text;
}

int TlsClientContext::OwnerIndex() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

absl::StatusOr<std::unique_ptr<TlsClientContext>> TlsClientContext::Create(
    const TlsClientOptions& options) {
  if (options.ca_file.empty() && !options.insecure) {
    return absl::InvalidArgumentError(
        "--proto dot verifies the server's certificate: give --tls-ca FILE (or --tls-insecure)");
  }
  if (options.resume_fraction < 0 || options.resume_fraction > 1) {
    return absl::InvalidArgumentError("--tls-resume must be 0..1");
  }
  std::unique_ptr<TlsClientContext> context(new TlsClientContext(options));
  OwnerIndex();  // allocated before any thread makes a connection
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return absl::InternalError(absl::StrCat("SSL_CTX_new: ", TakeOpenSslError()));
  context->ctx_ = ctx;
  // TLS 1.2 and 1.3 offered, as stub resolvers do (RFC 8310 §8, RFC 8996 retired the older).
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  static const unsigned char kAlpn[] = {3, 'd', 'o', 't'};  // RFC 7858 §3.1, IANA's "dot"
  if (SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn)) != 0) {
    return absl::InternalError(absl::StrCat("ALPN: ", TakeOpenSslError()));
  }
  if (!options.insecure) {
    if (SSL_CTX_load_verify_locations(ctx, options.ca_file.c_str(), nullptr) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--tls-ca ", options.ca_file, ": ", TakeOpenSslError()));
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    // The authentication domain name (RFC 8310 §8) is the SNI name when one is given.
    if (!options.sni.empty() &&
        X509_VERIFY_PARAM_set1_host(SSL_CTX_get0_param(ctx), options.sni.c_str(), 0) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("--tls-sni ", options.sni, ": bad name"));
    }
  }
  // Tickets are kept by their thread's store, not by OpenSSL's cache (one lock per insert).
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, OnNewSession);
  return context;
}

TlsClientContext::~TlsClientContext() { SSL_CTX_free(ctx_); }

TicketStore::~TicketStore() {
  for (SSL_SESSION* ticket : tickets_) SSL_SESSION_free(ticket);
}

SSL_SESSION* TicketStore::NextOffer() {
  if (tickets_.empty()) {
    credit_ = std::min(1.0, credit_ + fraction_);
    return nullptr;
  }
  credit_ += fraction_;
  if (credit_ < 1.0) return nullptr;
  credit_ -= 1.0;
  SSL_SESSION* ticket = tickets_.back();
  tickets_.pop_back();
  return ticket;
}

void TicketStore::Keep(SSL_SESSION* session) {
  if (!SSL_SESSION_is_resumable(session) || fraction_ == 0) {
    SSL_SESSION_free(session);
    return;
  }
  if (tickets_.size() == kMaxTickets) {
    SSL_SESSION_free(tickets_.front());
    tickets_.pop_front();
  }
  tickets_.push_back(session);
}

}  // namespace onepass::load
