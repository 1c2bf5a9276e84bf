#include "server/tls/onepass/onepass_engine.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "openssl/core_names.h"
#include "openssl/ssl.h"
#include "openssl/x509.h"
#include "server/tls/onepass/onepass_session.h"
#include "server/tls/openssl/openssl_engine.h"
#include "server/tls/tls13/wire/server_messages.h"
#include "server/tls/tls_server_context.h"

namespace onepass::tls {
namespace {

std::vector<uint8_t> Der(X509* certificate) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(certificate, &der);
  if (n <= 0) return {};
  std::vector<uint8_t> bytes(der, der + n);
  OPENSSL_free(der);
  return bytes;
}

// ECDSA on P-256 is the one key this engine signs with (ecdsa_secp256r1_sha256).
bool IsEcdsaP256(EVP_PKEY* key) {
  if (key == nullptr || !EVP_PKEY_is_a(key, "EC")) return false;
  char group[64] = {};
  size_t length = 0;
  if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
                                     &length) != 1) {
    return false;
  }
  return absl::string_view(group, length) == "prime256v1" ||
         absl::string_view(group, length) == "P-256";
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsEngine>> OnepassEngine::Create(const TlsServerContext& context,
                                                                 absl::Time now,
                                                                 CertificateFacts* facts) {
  absl::StatusOr<std::unique_ptr<TlsEngine>> openssl = MakeOpenSslEngine(context, now, facts);
  if (!openssl.ok()) return openssl.status();
  std::unique_ptr<OnepassEngine> engine(new OnepassEngine());
  engine->openssl_ = std::move(*openssl);
  engine->algorithms_ = tls13::SuiteAlgorithms::Create();
  if (engine->algorithms_ == nullptr) {
    return absl::InternalError("TLS (onepass engine): libcrypto lacks a TLS 1.3 algorithm");
  }
  const TlsConfig& config = context.config();
  absl::StatusOr<tls13::ServerPolicy> policy = tls13::MakeServerPolicy(
      config.ciphersuites, config.alpn, config.tickets_per_handshake, config.allow_tls12);
  if (!policy.ok()) return policy.status();
  engine->policy_ = std::move(*policy);

  // The chain and key as OpenSSL loaded and checked them.
  SSL_CTX* ctx = static_cast<const OpenSslEngine&>(*engine->openssl_).ssl_ctx();
  std::vector<std::vector<uint8_t>> chain;
  chain.push_back(Der(SSL_CTX_get0_certificate(ctx)));
  STACK_OF(X509)* rest = nullptr;
  if (SSL_CTX_get0_chain_certs(ctx, &rest) == 1 && rest != nullptr) {
    for (int i = 0; i < sk_X509_num(rest); ++i) chain.push_back(Der(sk_X509_value(rest, i)));
  }
  for (const std::vector<uint8_t>& der : chain) {
    if (der.empty()) return absl::InternalError("TLS (onepass engine): certificate encoding");
  }
  engine->certificate_message_ = tls13::EncodeCertificateMessage(chain);
  EVP_PKEY* key = SSL_CTX_get0_privatekey(ctx);
  if (IsEcdsaP256(key) && EVP_PKEY_up_ref(key) == 1) {
    engine->private_key_ = key;
    engine->serves_ = true;
  } else {
    engine->why_not_ =
        "the key is not ECDSA P-256: every handshake is served by the OpenSSL engine";
  }
  engine->keyring_ = tls13::TicketKeyring::Create(context.ticket_keys());
  if (engine->keyring_ == nullptr) {
    return absl::InternalError("TLS (onepass engine): cannot derive the ticket keys");
  }
  engine->session_context_.algorithms = engine->algorithms_.get();
  engine->session_context_.policy = &engine->policy_;
  engine->session_context_.certificate_message = engine->certificate_message_;
  engine->session_context_.private_key = engine->private_key_;  // null: all to OpenSSL
  engine->session_context_.tickets = engine->keyring_.get();
  return std::unique_ptr<TlsEngine>(std::move(engine));
}

std::string OnepassEngine::Coverage() const {
  if (!serves_) return absl::StrCat("onepass engine: ", why_not_);
  return "onepass engine: serves TLS 1.3 with this ECDSA P-256 certificate, X25519 or P-256 key "
         "shares (HelloRetryRequest for a missing one), the TLS 1.3 suites above but CCM, and "
         "resumption from its own tickets; hands everything else to OpenSSL (TLS 1.2, other "
         "groups, early data; counted by reason: onepass_tls_fallback_total)";
}

OnepassEngine::~OnepassEngine() { EVP_PKEY_free(private_key_); }

std::unique_ptr<EngineSession> OnepassEngine::NewSession() const {
  return std::make_unique<OnepassSession>(*this);
}

}  // namespace onepass::tls
