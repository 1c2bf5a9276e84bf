// tls_library_bench's GnuTLS server (Debian 12's GnuTLS 3.7): credentials, priorities (TLS
// 1.3 only; GnuTLS's default groups put X25519 first) and a ticket key made once; per
// connection a session over push/pull callbacks on memory, ALPN "dot", tickets on.
#include <gnutls/gnutls.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "loadtest/tls_library_bench/bench_server.h"

namespace onepass::tls_bench {
namespace {

class GnutlsServer : public BenchServer {
 public:
  GnutlsServer() = default;
  ~GnutlsServer() override {
    if (session_ != nullptr) gnutls_deinit(session_);
    gnutls_free(ticket_key_.data);
    if (priority_ != nullptr) gnutls_priority_deinit(priority_);
    if (credentials_ != nullptr) gnutls_certificate_free_credentials(credentials_);
  }

  bool Init(const std::string& chain_pem, const std::string& key_pem) {
    gnutls_datum_t cert{(unsigned char*)chain_pem.data(), (unsigned)chain_pem.size()};
    gnutls_datum_t key{(unsigned char*)key_pem.data(), (unsigned)key_pem.size()};
    return gnutls_certificate_allocate_credentials(&credentials_) >= 0 &&
           gnutls_certificate_set_x509_key_mem2(credentials_, &cert, &key, GNUTLS_X509_FMT_PEM,
                                                nullptr, 0) >= 0 &&
           gnutls_priority_init(&priority_, "NORMAL:-VERS-ALL:+VERS-TLS1.3", nullptr) >= 0 &&
           gnutls_session_ticket_key_generate(&ticket_key_) >= 0;
  }

  std::string Hello(const std::string& hello) override {
    if (session_ != nullptr) gnutls_deinit(session_);
    gnutls_init(&session_, GNUTLS_SERVER | GNUTLS_NONBLOCK);
    gnutls_priority_set(session_, priority_);
    gnutls_credentials_set(session_, GNUTLS_CRD_CERTIFICATE, credentials_);
    gnutls_session_ticket_enable_server(session_, &ticket_key_);
    gnutls_datum_t dot{(unsigned char*)"dot", 3};
    gnutls_alpn_set_protocols(session_, &dot, 1, GNUTLS_ALPN_SERVER_PRECEDENCE);
    gnutls_transport_set_ptr(session_, this);
    gnutls_transport_set_push_function(session_, Push);
    gnutls_transport_set_pull_function(session_, Pull);
    in_ = hello;
    out_.clear();
    if (gnutls_handshake(session_) != GNUTLS_E_AGAIN) return "";
    return out_;
  }

  std::string Answer(const std::string& flight, bool* resumed) override {
    in_ = flight;
    out_.clear();
    if (gnutls_handshake(session_) != 0) return "";
    *resumed = gnutls_session_is_resumed(session_) != 0;
    char room[512];
    const ssize_t got = gnutls_record_recv(session_, room, sizeof(room));
    if (got <= 0 || gnutls_record_send(session_, room, got) != got) return "";
    gnutls_bye(session_, GNUTLS_SHUT_WR);
    return out_;
  }

 private:
  static ssize_t Push(gnutls_transport_ptr_t p, const void* data, size_t size) {
    static_cast<GnutlsServer*>(p)->out_.append(static_cast<const char*>(data), size);
    return size;
  }
  static ssize_t Pull(gnutls_transport_ptr_t p, void* data, size_t size) {
    auto* self = static_cast<GnutlsServer*>(p);
    if (self->in_.empty()) {
      gnutls_transport_set_errno(self->session_, EAGAIN);
      return -1;
    }
    const size_t n = std::min(size, self->in_.size());
    std::memcpy(data, self->in_.data(), n);
    self->in_.erase(0, n);
    return n;
  }

  gnutls_certificate_credentials_t credentials_ = nullptr;
  gnutls_priority_t priority_ = nullptr;
  gnutls_datum_t ticket_key_{};
  gnutls_session_t session_ = nullptr;
  std::string in_, out_;
};

}  // namespace

std::unique_ptr<BenchServer> MakeGnutlsServer(const std::string& chain_pem,
                                              const std::string& key_pem) {
  static const bool initialized = gnutls_global_init() >= 0;
  if (!initialized) return nullptr;
  auto server = std::make_unique<GnutlsServer>();
  if (!server->Init(chain_pem, key_pem)) return nullptr;
  return server;
}

std::string GnutlsVersion() { return gnutls_check_version(nullptr); }

}  // namespace onepass::tls_bench
