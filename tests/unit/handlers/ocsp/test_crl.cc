#include "tests/unit/handlers/ocsp/test_crl.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdlib>
#include <utility>

namespace onepass::ocsp::testing {

struct TestCrlIssuer::Keys {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  ~Keys() {
    EVP_PKEY_free(key);
    X509_free(cert);
  }
};

namespace {

void Need(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

TestCrlIssuer::TestCrlIssuer(const std::string& common_name) : keys_(std::make_unique<Keys>()) {
  keys_->key = EVP_EC_gen("P-256");
  Need(keys_->key != nullptr);
  X509* cert = X509_new();
  keys_->cert = cert;
  Need(X509_set_version(cert, 2) == 1);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_NAME* name = X509_get_subject_name(cert);
  Need(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                  reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                  -1, 0) == 1);
  Need(X509_set_issuer_name(cert, name) == 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600L * 24 * 365);
  Need(X509_set_pubkey(cert, keys_->key) == 1);
  // A CA that signs certificates and CRLs (RFC 5280 §4.2.1.9, §4.2.1.3): openssl verify
  // refuses an issuer without them.
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair<int, const char*>{NID_basic_constraints, "critical,CA:TRUE"},
        {NID_key_usage, "critical,keyCertSign,cRLSign"},
        {NID_subject_key_identifier, "hash"}}) {
    X509_EXTENSION* extension = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    Need(extension != nullptr && X509_add_ext(cert, extension, -1) == 1);
    X509_EXTENSION_free(extension);
  }
  Need(X509_sign(cert, keys_->key, EVP_sha256()) > 0);
}

TestCrlIssuer::~TestCrlIssuer() = default;

std::string TestCrlIssuer::MakeCrl(absl::Time this_update, absl::Time next_update,
                                   int revoked) const {
  X509_CRL* crl = X509_CRL_new();
  Need(crl != nullptr && X509_CRL_set_version(crl, 1) == 1);
  Need(X509_CRL_set_issuer_name(crl, X509_get_subject_name(keys_->cert)) == 1);
  ASN1_TIME* time = ASN1_TIME_set(nullptr, absl::ToTimeT(this_update));
  Need(X509_CRL_set1_lastUpdate(crl, time) == 1);
  ASN1_TIME_set(time, absl::ToTimeT(next_update));
  Need(X509_CRL_set1_nextUpdate(crl, time) == 1);
  for (int serial = 1; serial <= revoked; ++serial) {
    X509_REVOKED* entry = X509_REVOKED_new();
    ASN1_INTEGER* number = ASN1_INTEGER_new();
    ASN1_INTEGER_set(number, serial);
    X509_REVOKED_set_serialNumber(entry, number);
    ASN1_TIME_set(time, absl::ToTimeT(this_update) - 60);
    X509_REVOKED_set_revocationDate(entry, time);
    Need(X509_CRL_add0_revoked(crl, entry) == 1);
    ASN1_INTEGER_free(number);
  }
  ASN1_TIME_free(time);
  X509_CRL_sort(crl);
  Need(X509_CRL_sign(crl, keys_->key, EVP_sha256()) > 0);
  unsigned char* der = nullptr;
  const int size = i2d_X509_CRL(crl, &der);
  Need(size > 0);
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(size));
  OPENSSL_free(der);
  X509_CRL_free(crl);
  return out;
}

std::string TestCrlIssuer::CertificatePem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  Need(PEM_write_bio_X509(bio, keys_->cert) == 1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  return pem;
}

std::string TestCrlIssuer::IssueLeafPem(int64_t serial, const std::string& crl_url) const {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  Need(key != nullptr && cert != nullptr && X509_set_version(cert, 2) == 1);
  ASN1_INTEGER_set_int64(X509_get_serialNumber(cert), serial);
  X509_NAME* name = X509_get_subject_name(cert);
  Need(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                  reinterpret_cast<const unsigned char*>("leaf.example"), -1, -1,
                                  0) == 1);
  Need(X509_set_issuer_name(cert, X509_get_subject_name(keys_->cert)) == 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600L * 24 * 30);
  Need(X509_set_pubkey(cert, key) == 1);
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, keys_->cert, cert, nullptr, nullptr, 0);
  const std::string value = "URI:" + crl_url;
  X509_EXTENSION* cdp =
      X509V3_EXT_conf_nid(nullptr, &ctx, NID_crl_distribution_points, value.c_str());
  Need(cdp != nullptr && X509_add_ext(cert, cdp, -1) == 1);
  X509_EXTENSION_free(cdp);
  Need(X509_sign(cert, keys_->key, EVP_sha256()) > 0);
  BIO* bio = BIO_new(BIO_s_mem());
  Need(PEM_write_bio_X509(bio, cert) == 1);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  X509_free(cert);
  EVP_PKEY_free(key);
  return pem;
}

}  // namespace onepass::ocsp::testing
