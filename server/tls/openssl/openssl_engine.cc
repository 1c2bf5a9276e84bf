#include "server/tls/openssl/openssl_engine.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/data_file.h"
#include "server/tls/handshake_gate.h"
#include "server/tls/openssl/openssl_session.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_stats.h"

namespace onepass::tls {

namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// OpenSSL's reason for the last failure, for error messages; drains the thread's error queue.
std::string OpenSslError() {
  unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return "no detail from OpenSSL";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

// Never prompts: an encrypted key would otherwise make OpenSSL ask on the terminal, which
// blocks a daemon's start-up or reload forever.
int RefusePassphrase(char* buf, int size, int rwflag, void* userdata) { return -1; }

absl::Time AsnTime(const ASN1_TIME* when) {
  struct tm tm = {};
  if (when == nullptr || ASN1_TIME_to_tm(when, &tm) != 1) return absl::InfinitePast();
  return absl::FromTimeT(timegm(&tm));
}

std::string NameLine(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_ONELINE) < 0) return "?";
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, size > 0 ? size : 0);
}

std::string KeyDescription(EVP_PKEY* key) {
  char group[64] = {};
  size_t group_size = 0;
  std::string text = EVP_PKEY_get0_type_name(key) ? EVP_PKEY_get0_type_name(key) : "?";
  if (EVP_PKEY_get_group_name(key, group, sizeof(group), &group_size) == 1) {
    absl::StrAppend(&text, " ", group);
  } else {
    absl::StrAppend(&text, " ", EVP_PKEY_get_bits(key), " bits");
  }
  return text;
}

// AES-256-CBC's IV: one block (RFC 5077 §4's recommended ticket format).
constexpr int kTicketIvBytes = 16;

// RFC 5077 §4 via OpenSSL: enc=1 asks for the key to encrypt a new ticket, enc=0 for the one
// named in a ticket the client offers. Returns 1 (encrypt with it), 2 (decrypted: and issue a
// fresh ticket under the newest key), 0 (unknown key: the ticket is ignored and a full
// handshake follows, never an error) or -1 (failure).
int TicketKeyCallback(SSL* ssl, unsigned char* key_name, unsigned char* iv, EVP_CIPHER_CTX* cipher,
                      EVP_MAC_CTX* mac, int enc) {
  const auto* engine =
      static_cast<const OpenSslEngine*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  const std::vector<TicketKey>& keys = engine->context().ticket_keys();
  const TicketKey* key = nullptr;
  int verdict = 1;
  if (enc == 1) {
    key = &keys.front();
    std::memcpy(key_name, key->name.data(), key->name.size());
    if (RAND_bytes(iv, kTicketIvBytes) != 1) return -1;
  } else {
    for (size_t i = 0; i < keys.size() && key == nullptr; ++i) {
      if (std::memcmp(key_name, keys[i].name.data(), keys[i].name.size()) == 0) key = &keys[i];
    }
    // Always 2 (renew): OpenSSL then sends a resumed client a fresh ticket under the newest key.
    // With 1 it sends none after a resumption, and a client that uses each ticket once (RFC
    // 8446 §C.4 asks clients to) would resume only every other connection.
    verdict = 2;
    if (key == nullptr) {
      auto* hooks = static_cast<SessionHooks*>(SSL_get_app_data(ssl));
      if (hooks != nullptr && hooks->stats != nullptr) ++hooks->stats->tickets_unknown_key;
      // A full handshake follows: it is charged as one (HandshakeGate::Admit).
      if (hooks != nullptr && hooks->gate != nullptr && !hooks->gate->Admit(false)) {
        hooks->refused = true;
        return -1;
      }
      return 0;
    }
  }
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(
          OSSL_MAC_PARAM_KEY, const_cast<uint8_t*>(key->hmac_key.data()), key->hmac_key.size()),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0),
      OSSL_PARAM_construct_end()};
  if (EVP_MAC_CTX_set_params(mac, params) != 1) return -1;
  // The cipher fetched once per context: EVP_aes_256_cbc() would make OpenSSL 3 look
  // AES-256-CBC up in its provider store on every ticket.
  const EVP_CIPHER* aes = engine->ticket_cipher();
  const int ok = enc == 1 ? EVP_EncryptInit_ex(cipher, aes, nullptr, key->aes_key.data(), iv)
                          : EVP_DecryptInit_ex(cipher, aes, nullptr, key->aes_key.data(), iv);
  return ok == 1 ? verdict : -1;
}

// Before anything costly is done for a ClientHello: the connection's gate decides whether this
// client may have a handshake now, a resumption (the hello offers a ticket: RFC 8446 §4.2.11's
// pre_shared_key) priced apart from a full one. A refusal ends the handshake with a
// handshake_failure alert, having spent no signature or key exchange on it.
int AdmitClientHello(SSL* ssl, int* alert, void*) {
  auto* hooks = static_cast<SessionHooks*>(SSL_get_app_data(ssl));
  if (hooks == nullptr || hooks->gate == nullptr) return SSL_CLIENT_HELLO_SUCCESS;
  const unsigned char* psk = nullptr;
  size_t psk_size = 0;
  const bool resumption = SSL_client_hello_get0_ext(ssl, TLSEXT_TYPE_psk, &psk, &psk_size) == 1;
  if (hooks->gate->Admit(resumption)) return SSL_CLIENT_HELLO_SUCCESS;
  hooks->refused = true;
  *alert = SSL_AD_HANDSHAKE_FAILURE;
  return SSL_CLIENT_HELLO_ERROR;
}

// RFC 7301 §3.2: the server picks one of the client's protocols, or, when it supports none of
// them, answers with the fatal no_application_protocol alert (OpenSSL sends it for
// SSL_TLSEXT_ERR_ALERT_FATAL). A client offering no ALPN never gets here and is served: RFC
// 7858 §3.1 does not require it. `arg` is the context's wire-format list.
int SelectAlpn(SSL* ssl, const unsigned char** out, unsigned char* out_size,
               const unsigned char* offered, unsigned int offered_size, void* arg) {
  const auto* ours = static_cast<const std::string*>(arg);
  unsigned char* selected = nullptr;
  unsigned char selected_size = 0;
  if (SSL_select_next_proto(&selected, &selected_size,
                            reinterpret_cast<const unsigned char*>(ours->data()), ours->size(),
                            offered, offered_size) != OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  }
  *out = selected;
  *out_size = selected_size;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TlsEngine>> MakeOpenSslEngine(const TlsServerContext& context,
                                                             absl::Time now,
                                                             CertificateFacts* facts) {
  ERR_clear_error();
  std::unique_ptr<OpenSslEngine> engine(new OpenSslEngine(context));
  engine->ticket_cipher_ = EVP_CIPHER_fetch(nullptr, "AES-256-CBC", nullptr);
  if (engine->ticket_cipher_ == nullptr ||
      EVP_CIPHER_get_iv_length(engine->ticket_cipher_) != kTicketIvBytes) {
    return absl::InternalError(absl::StrCat("TLS: AES-256-CBC: ", OpenSslError()));
  }
  engine->ctx_ = SSL_CTX_new_ex(nullptr, nullptr, TLS_server_method());
  if (engine->ctx_ == nullptr) {
    return absl::InternalError(absl::StrCat("TLS: SSL_CTX_new: ", OpenSslError()));
  }
  if (absl::Status status = engine->LoadCertificateAndKey(facts); !status.ok()) return status;
  if (absl::Status status = engine->Configure(); !status.ok()) return status;
  return std::unique_ptr<TlsEngine>(std::move(engine));
}

std::unique_ptr<EngineSession> OpenSslEngine::NewSession() const {
  return std::make_unique<OpenSslSession>(*this);
}

OpenSslEngine::~OpenSslEngine() {
  SSL_CTX_free(ctx_);
  EVP_CIPHER_free(ticket_cipher_);
}

absl::Status OpenSslEngine::LoadCertificateAndKey(CertificateFacts* facts) {
  const TlsConfig& config_ = context_.config();
  absl::StatusOr<std::string> pem = ReadDataFile(config_.cert_file, "--tls-cert");
  if (!pem.ok()) return pem.status();
  BioPtr bio(BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size())));
  X509Ptr leaf(PEM_read_bio_X509_AUX(bio.get(), nullptr, RefusePassphrase, nullptr));
  if (leaf == nullptr || SSL_CTX_use_certificate(ctx_, leaf.get()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-cert ", config_.cert_file, ": no PEM certificate (", OpenSslError(),
                     "); give the server's certificate first, then its intermediates, all PEM"));
  }
  facts->chain_length = 1;
  while (X509* next = PEM_read_bio_X509(bio.get(), nullptr, RefusePassphrase, nullptr)) {
    if (SSL_CTX_add0_chain_cert(ctx_, next) != 1) {
      X509_free(next);
      return absl::InternalError(
          absl::StrCat("--tls-cert ", config_.cert_file, ": ", OpenSslError()));
    }
    ++facts->chain_length;
  }
  ERR_clear_error();  // the loop ends on "no start line": expected, not an error

  absl::StatusOr<std::string> key_pem = ReadDataFile(config_.key_file, "--tls-key");
  if (!key_pem.ok()) return key_pem.status();
  BioPtr key_bio(BIO_new_mem_buf(key_pem->data(), static_cast<int>(key_pem->size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, RefusePassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-key ", config_.key_file, ": no unencrypted PEM private key (", OpenSslError(),
        "); an encrypted key must be decrypted first: openssl pkey -in KEY -out PLAIN"));
  }
  if (X509_check_private_key(leaf.get(), key.get()) != 1 ||
      SSL_CTX_use_PrivateKey(ctx_, key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls-key ", config_.key_file, " does not belong to the first certificate of --tls-cert ",
        config_.cert_file, " (the leaf must come first; compare `openssl x509 -pubkey -noout` ",
        "with `openssl pkey -pubout`)"));
  }
  facts->key_description = KeyDescription(key.get());
  facts->subject = NameLine(X509_get_subject_name(leaf.get()));
  facts->issuer = NameLine(X509_get_issuer_name(leaf.get()));
  facts->not_before = AsnTime(X509_get0_notBefore(leaf.get()));
  facts->not_after = AsnTime(X509_get0_notAfter(leaf.get()));
  return absl::OkStatus();
}

absl::Status OpenSslEngine::SetCipherSuites() {
  const TlsConfig& config_ = context_.config();
  // OpenSSL takes an empty list (no TLS 1.3 at all) and, depending on the version, skips names
  // it does not know: every name given must be one it now uses.
  const std::vector<std::string> wanted = absl::StrSplit(config_.ciphersuites, ':');
  ERR_clear_error();
  const bool set = SSL_CTX_set_ciphersuites(ctx_, config_.ciphersuites.c_str()) == 1;
  std::vector<std::string> in_use;
  if (set) {
    STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx_);
    for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
      const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(ciphers, i);
      if ((SSL_CIPHER_get_protocol_id(cipher) >> 8) == 0x13) {  // RFC 8446 §B.4: 0x13xx
        in_use.emplace_back(SSL_CIPHER_standard_name(cipher));
      }
    }
  }
  for (const std::string& name : wanted) {
    if (!set || std::find(in_use.begin(), in_use.end(), name) == in_use.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "TLS: --tls-ciphersuites \"", config_.ciphersuites, "\": \"", name,
          "\" is no TLS 1.3 cipher suite OpenSSL offers (give names such as "
          "TLS_AES_128_GCM_SHA256, colon-separated; `openssl ciphers -s -tls1_3` lists them)"));
    }
  }
  return absl::OkStatus();
}

absl::Status OpenSslEngine::Configure() {
  const TlsConfig& config_ = context_.config();
  // RFC 8996: nothing below 1.2; 1.2 only when asked, for clients that lack 1.3.
  SSL_CTX_set_min_proto_version(ctx_, config_.allow_tls12 ? TLS1_2_VERSION : TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx_, TLS1_3_VERSION);
  // Renegotiation (1.2 only) lets a client make us redo the expensive half of a handshake at
  // will on a connection it already holds; compression invites CRIME-style attacks. Neither
  // has a use for one query per connection.
  // Our order of cipher suites, not the client's, except for a client that asks for ChaCha20
  // first (it has no AES hardware).
  SSL_CTX_set_options(ctx_, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_PRIORITIZE_CHACHA);
  if (absl::Status suites = SetCipherSuites(); !suites.ok()) return suites;
  // The chain sent is the one --tls-cert holds, as it is: OpenSSL would otherwise try, on
  // every handshake of a certificate given without intermediates, to build a chain from the
  // context's (empty) store (a small cost: 0.1% of the server's instructions per handshake,
  // callgrind; but never a certificate the operator did not give).
  SSL_CTX_set_mode(ctx_, SSL_MODE_NO_AUTO_CHAIN);
  // X25519 first: the cheapest key exchange OpenSSL has; P-256 for clients without it.
  if (SSL_CTX_set1_groups_list(ctx_, "X25519:P-256:P-384") != 1) {
    return absl::InternalError(absl::StrCat("TLS: groups: ", OpenSslError()));
  }
  // Resumption is stateless: the session lives in the ticket, encrypted with our ticket keys,
  // so any worker or host with the same keys resumes it and nothing is stored per client.
  SSL_CTX_set_session_cache_mode(ctx_, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_num_tickets(ctx_, config_.tickets_per_handshake);
  SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx_, TicketKeyCallback);
  // 0-RTT early data refused (tickets say max_early_data 0, RFC 8446 §4.6.1). A DNS query is
  // idempotent, but early data can be replayed by anyone who recorded it (RFC 8446 §8): a
  // stateless server has no strike register to stop that, and a replayed query still costs us
  // an answer and tells the replayer what the victim asked. The round trip it saves is small
  // beside that for one query per connection.
  SSL_CTX_set_max_early_data(ctx_, 0);
  SSL_CTX_set_recv_max_early_data(ctx_, 0);
  // No protocols of ours (Whois over TLS has no ALPN name): the client's offer is ignored.
  if (!context_.alpn_wire().empty()) {
    SSL_CTX_set_alpn_select_cb(ctx_, SelectAlpn, const_cast<std::string*>(&context_.alpn_wire()));
  }
  SSL_CTX_set_client_hello_cb(ctx_, AdmitClientHello, nullptr);
  SSL_CTX_set_app_data(ctx_, this);
  return absl::OkStatus();
}

}  // namespace onepass::tls
