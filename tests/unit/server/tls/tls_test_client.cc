#include "tests/unit/server/tls/tls_test_client.h"

#include <openssl/err.h>

#include <cstdio>
#include <cstdlib>

namespace onepass::tls::testing {

TestTlsClient::TestTlsClient(const ClientOptions& options) {
  ctx_ = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx_, options.min_version);
  SSL_CTX_set_max_proto_version(ctx_, options.max_version);
  if (!options.ciphersuites.empty() &&
      SSL_CTX_set_ciphersuites(ctx_, options.ciphersuites.c_str()) != 1) {
    std::abort();
  }
  if (!options.ca_file.empty()) {
    SSL_CTX_load_verify_locations(ctx_, options.ca_file.c_str(), nullptr);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
  }
  ssl_ = SSL_new(ctx_);
  if (ctx_ == nullptr || ssl_ == nullptr) std::abort();
  if (!options.alpn.empty()) {
    std::string wire;
    for (const std::string& name : options.alpn) {
      wire.push_back(static_cast<char>(name.size()));
      wire += name;
    }
    SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()), wire.size());
  }
  if (options.session != nullptr) SSL_set_session(ssl_, options.session);
  SSL_set_tlsext_host_name(ssl_, "dot.example.test");
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  BIO_set_mem_eof_return(in_, -1);  // empty means "wait", not EOF
  SSL_set_bio(ssl_, in_, out_);
  SSL_set_connect_state(ssl_);
}

TestTlsClient::~TestTlsClient() {
  // A client SSL freed without its close_notify sent marks its session not resumable
  // (OpenSSL's ssl_clear_bad_session): say goodbye, as a well-behaved resolver does.
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
  SSL_free(ssl_);
  SSL_CTX_free(ctx_);
}

bool TestTlsClient::Step() {
  if (failed_) return false;
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) return true;
  if (SSL_get_error(ssl_, rc) != SSL_ERROR_WANT_READ) failed_ = true;
  ERR_clear_error();
  return false;
}

std::string TestTlsClient::TakeOutput() {
  char* data = nullptr;
  const long size = BIO_get_mem_data(out_, &data);
  std::string bytes(data, size > 0 ? size : 0);
  (void)BIO_reset(out_);
  return bytes;
}

void TestTlsClient::GiveInput(absl::string_view bytes) {
  if (!bytes.empty()) BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
}

void TestTlsClient::Write(absl::string_view plaintext) {
  size_t written = 0;
  if (SSL_write_ex(ssl_, plaintext.data(), plaintext.size(), &written) != 1) failed_ = true;
}

std::string TestTlsClient::Read(bool* closed) {
  std::string text;
  char buffer[4096];
  for (;;) {
    size_t got = 0;
    const int rc = SSL_read_ex(ssl_, buffer, sizeof(buffer), &got);
    if (rc == 1) {
      text.append(buffer, got);
      continue;
    }
    const int error = SSL_get_error(ssl_, rc);
    if (closed != nullptr) *closed = error == SSL_ERROR_ZERO_RETURN;
    if (error != SSL_ERROR_WANT_READ && error != SSL_ERROR_ZERO_RETURN) failed_ = true;
    ERR_clear_error();
    return text;
  }
}

FeedResult Pump(TestTlsClient& client, TlsSession& server, std::string* server_plain) {
  FeedResult last;
  uint8_t room[65536];
  for (int round = 0; round < 16; ++round) {
    client.Step();
    const std::string bytes = client.TakeOutput();
    if (bytes.empty()) break;
    last = server.Feed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, room);
    if (server_plain != nullptr) {
      server_plain->append(reinterpret_cast<const char*>(room), last.plaintext);
    }
    const auto pending = server.Pending();
    client.GiveInput({reinterpret_cast<const char*>(pending.data()), pending.size()});
    server.ConsumePending(pending.size());
    if (last.result == TlsResult::kFailed) {
      client.Step();  // let the client read the alert
      break;
    }
  }
  return last;
}

}  // namespace onepass::tls::testing
