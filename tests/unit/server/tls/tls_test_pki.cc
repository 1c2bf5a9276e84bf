#include "tests/unit/server/tls/tls_test_pki.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

namespace onepass::tls::testing {

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tls_test_pki: %s failed\n", what);
    std::abort();
  }
}

std::string Pem(int (*write)(BIO*, const void*), const void* object) {
  BIO* bio = BIO_new(BIO_s_mem());
  Check(write(bio, object) == 1, "PEM write");
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string text(data, size);
  BIO_free(bio);
  return text;
}

std::string CertPem(X509* cert) {
  return Pem([](BIO* b, const void* c) { return PEM_write_bio_X509(b, (X509*)c); }, cert);
}

std::string KeyPem(EVP_PKEY* key) {
  return Pem(
      [](BIO* b, const void* k) {
        return PEM_write_bio_PrivateKey(b, (EVP_PKEY*)k, nullptr, nullptr, 0, nullptr, nullptr);
      },
      key);
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Check(ext != nullptr && X509_add_ext(cert, ext, -1) == 1, "extension");
  X509_EXTENSION_free(ext);
}

std::vector<uint8_t> CertDer(X509* cert) {
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert, &der);
  Check(n > 0, "i2d_X509");
  std::vector<uint8_t> bytes(der, der + n);
  OPENSSL_free(der);
  return bytes;
}

X509* MakeCert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key,
               const TestCertOptions& options, long serial) {
  X509* cert = X509_new();
  Check(cert != nullptr, "X509_new");
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  ASN1_TIME_set(X509_getm_notBefore(cert), absl::ToTimeT(options.not_before));
  ASN1_TIME_set(X509_getm_notAfter(cert), absl::ToTimeT(options.not_after));
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(cert, key);
  X509* signer = issuer ? issuer : cert;
  if (issuer == nullptr) {
    AddExtension(cert, signer, NID_basic_constraints, "critical,CA:TRUE");
    AddExtension(cert, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    AddExtension(cert, signer, NID_subject_alt_name, ("DNS:" + cn).c_str());
    AddExtension(cert, signer, NID_ext_key_usage, "serverAuth");
  }
  Check(X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

// The directories still alive, removed at exit: fuzzers and test fixtures keep theirs in objects
// that are never destroyed (libFuzzer never returns to destroy them), which left a directory
// with private keys in /tmp per run. Only by the process that made it: a forked child's exit()
// must not remove its parent's files.
struct LiveDirs {
  std::mutex mutex;
  std::map<std::string, pid_t> made_by;
};

LiveDirs& Live() {
  static LiveDirs* const live = [] {
    auto* made = new LiveDirs();  // never destroyed: atexit handlers run after statics die
    std::atexit([] {
      LiveDirs& dirs = Live();
      std::lock_guard<std::mutex> lock(dirs.mutex);
      for (const auto& [dir, pid] : dirs.made_by) {
        std::error_code ignored;
        if (pid == getpid()) std::filesystem::remove_all(dir, ignored);
      }
      dirs.made_by.clear();
    });
    return made;
  }();
  return *live;
}

}  // namespace

TestPkiDir::TestPkiDir(const TestCertOptions& options) {
  char templ[] = "/tmp/onepass-tls-XXXXXX";
  Check(mkdtemp(templ) != nullptr, "mkdtemp");
  dir_ = templ;
  {
    LiveDirs& live = Live();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.made_by[dir_] = getpid();
  }
  EVP_PKEY* ca_key = EVP_EC_gen("P-256");
  EVP_PKEY* key = EVP_EC_gen("P-256");
  EVP_PKEY* other = EVP_EC_gen("P-256");
  Check(ca_key && key && other, "EVP_EC_gen");
  TestCertOptions ca_options = options;
  ca_options.not_after = options.not_after + absl::Hours(24 * 365);
  X509* ca = MakeCert(ca_key, "onepass test CA", nullptr, nullptr, ca_options, 1);
  X509* leaf = MakeCert(key, options.common_name, ca, ca_key, options, 2);
  const std::string ca_pem = CertPem(ca);
  chain_pem_ = CertPem(leaf) + ca_pem;
  chain_der_ = {CertDer(leaf), CertDer(ca)};
  key_pem_ = KeyPem(key);
  chain_file_ = WriteFile("chain.pem", chain_pem_);
  key_file_ = WriteFile("key.pem", key_pem_);
  ca_file_ = WriteFile("ca.pem", ca_pem);
  other_key_file_ = WriteFile("other-key.pem", KeyPem(other));
  X509_free(leaf);
  X509_free(ca);
  EVP_PKEY_free(other);
  EVP_PKEY_free(key);
  EVP_PKEY_free(ca_key);
}

TestPkiDir::~TestPkiDir() {
  {
    LiveDirs& live = Live();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.made_by.erase(dir_);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

EVP_PKEY* TestPkiDir::NewPrivateKey() const {
  BIO* bio = BIO_new_mem_buf(key_pem_.data(), static_cast<int>(key_pem_.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ERR_clear_error();
  return key;
}

std::string TestPkiDir::WriteFile(const std::string& name, const std::string& bytes) const {
  const std::string path = dir_ + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  Check(out.good(), "write");
  return path;
}

}  // namespace onepass::tls::testing
