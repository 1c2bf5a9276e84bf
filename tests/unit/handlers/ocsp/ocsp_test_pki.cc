#include "tests/unit/handlers/ocsp/ocsp_test_pki.h"

#include <openssl/ocsp.h>

#include <cstdio>
#include <cstdlib>

namespace onepass::ocsp::testing {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "ocsp_test_pki: OpenSSL failed: %s\n", what);
    std::abort();
  }
}

template <typename T, int (*Encode)(const T*, unsigned char**)>
std::string ToDer(const T* object) {
  unsigned char* der = nullptr;
  const int size = Encode(object, &der);
  Check(size > 0, "DER encoding");
  std::string out(reinterpret_cast<const char*>(der), static_cast<size_t>(size));
  OPENSSL_free(der);
  return out;
}

}  // namespace

std::unique_ptr<TestPki> TestPki::Create(const std::string& common_name) {
  std::unique_ptr<TestPki> pki(new TestPki());
  pki->key_ = EVP_EC_gen("P-256");
  Check(pki->key_ != nullptr, "EC key generation");
  pki->cert_ = X509_new();
  X509* cert = pki->cert_;
  Check(cert != nullptr, "X509_new");
  Check(X509_set_version(cert, 2) == 1, "X509_set_version");
  Check(ASN1_INTEGER_set(X509_get_serialNumber(cert), 1) == 1, "serial");
  Check(X509_gmtime_adj(X509_getm_notBefore(cert), -86400) != nullptr, "notBefore");
  Check(X509_gmtime_adj(X509_getm_notAfter(cert), 365L * 86400) != nullptr, "notAfter");
  Check(X509_set_pubkey(cert, pki->key_) == 1, "X509_set_pubkey");
  X509_NAME* name = X509_get_subject_name(cert);
  Check(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                   -1, 0) == 1,
        "subject");
  Check(X509_set_issuer_name(cert, name) == 1, "issuer");
  Check(X509_sign(cert, pki->key_, EVP_sha256()) > 0, "X509_sign");
  return pki;
}

TestPki::~TestPki() {
  X509_free(cert_);
  EVP_PKEY_free(key_);
}

OCSP_CERTID* TestPki::NewCertId(const CertRef& cert) const {
  ASN1_INTEGER* serial = ASN1_INTEGER_new();
  Check(serial != nullptr && ASN1_INTEGER_set_int64(serial, cert.serial) == 1, "serial");
  OCSP_CERTID* id =
      OCSP_cert_id_new(cert.hash != nullptr ? cert.hash : EVP_sha1(), X509_get_subject_name(cert_),
                       X509_get0_pubkey_bitstr(cert_), serial);
  ASN1_INTEGER_free(serial);
  Check(id != nullptr, "OCSP_cert_id_new");
  return id;
}

std::string TestPki::SignResponse(const std::vector<CertRef>& certs, absl::Time this_update,
                                  absl::optional<absl::Time> next_update) const {
  OCSP_BASICRESP* basic = OCSP_BASICRESP_new();
  Check(basic != nullptr, "OCSP_BASICRESP_new");
  ASN1_GENERALIZEDTIME* this_time = ASN1_GENERALIZEDTIME_set(nullptr, absl::ToTimeT(this_update));
  ASN1_GENERALIZEDTIME* next_time =
      next_update.has_value() ? ASN1_GENERALIZEDTIME_set(nullptr, absl::ToTimeT(*next_update))
                              : nullptr;
  Check(this_time != nullptr && (next_time != nullptr || !next_update.has_value()), "times");
  for (const CertRef& cert : certs) {
    OCSP_CERTID* id = NewCertId(cert);
    int status = V_OCSP_CERTSTATUS_GOOD;
    int reason = -1;
    ASN1_TIME* revoked_at = nullptr;
    if (cert.status == CertStatus::kRevoked) {
      status = V_OCSP_CERTSTATUS_REVOKED;
      reason = OCSP_REVOKED_STATUS_KEYCOMPROMISE;
      revoked_at = this_time;
    } else if (cert.status == CertStatus::kUnknown) {
      status = V_OCSP_CERTSTATUS_UNKNOWN;
    }
    Check(OCSP_basic_add1_status(basic, id, status, reason, revoked_at, this_time, next_time) !=
              nullptr,
          "OCSP_basic_add1_status");
    OCSP_CERTID_free(id);
  }
  Check(OCSP_basic_sign(basic, cert_, key_, EVP_sha256(), nullptr, 0) == 1, "OCSP_basic_sign");
  OCSP_RESPONSE* response = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic);
  Check(response != nullptr, "OCSP_response_create");
  std::string der = ToDer<OCSP_RESPONSE, i2d_OCSP_RESPONSE>(response);
  OCSP_RESPONSE_free(response);
  OCSP_BASICRESP_free(basic);
  ASN1_GENERALIZEDTIME_free(this_time);
  ASN1_GENERALIZEDTIME_free(next_time);
  return der;
}

std::string TestPki::SignResponseForRequest(const std::string& request_der, CertStatus status,
                                            absl::Time this_update, absl::Time next_update) const {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(request_der.data());
  OCSP_REQUEST* request = d2i_OCSP_REQUEST(nullptr, &p, static_cast<long>(request_der.size()));
  if (request == nullptr) return "";
  OCSP_BASICRESP* basic = OCSP_BASICRESP_new();
  ASN1_GENERALIZEDTIME* this_time = ASN1_GENERALIZEDTIME_set(nullptr, absl::ToTimeT(this_update));
  ASN1_GENERALIZEDTIME* next_time = ASN1_GENERALIZEDTIME_set(nullptr, absl::ToTimeT(next_update));
  Check(basic != nullptr && this_time != nullptr && next_time != nullptr, "response setup");
  const bool revoked = status == CertStatus::kRevoked;
  for (int i = 0; i < OCSP_request_onereq_count(request); ++i) {
    OCSP_CERTID* id = OCSP_onereq_get0_id(OCSP_request_onereq_get0(request, i));
    Check(
        OCSP_basic_add1_status(basic, id,
                               revoked ? V_OCSP_CERTSTATUS_REVOKED
                                       : (status == CertStatus::kGood ? V_OCSP_CERTSTATUS_GOOD
                                                                      : V_OCSP_CERTSTATUS_UNKNOWN),
                               revoked ? OCSP_REVOKED_STATUS_KEYCOMPROMISE : -1,
                               revoked ? this_time : nullptr, this_time, next_time) != nullptr,
        "OCSP_basic_add1_status");
  }
  Check(OCSP_basic_sign(basic, cert_, key_, EVP_sha256(), nullptr, 0) == 1, "OCSP_basic_sign");
  OCSP_RESPONSE* response = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic);
  Check(response != nullptr, "OCSP_response_create");
  std::string der = ToDer<OCSP_RESPONSE, i2d_OCSP_RESPONSE>(response);
  OCSP_RESPONSE_free(response);
  OCSP_BASICRESP_free(basic);
  ASN1_GENERALIZEDTIME_free(this_time);
  ASN1_GENERALIZEDTIME_free(next_time);
  OCSP_REQUEST_free(request);
  return der;
}

std::string TestPki::MakeRequest(const std::vector<CertRef>& certs, bool nonce) const {
  OCSP_REQUEST* request = OCSP_REQUEST_new();
  Check(request != nullptr, "OCSP_REQUEST_new");
  for (const CertRef& cert : certs) {
    Check(OCSP_request_add0_id(request, NewCertId(cert)) != nullptr, "OCSP_request_add0_id");
  }
  if (nonce) Check(OCSP_request_add1_nonce(request, nullptr, -1) == 1, "nonce");
  std::string der = ToDer<OCSP_REQUEST, i2d_OCSP_REQUEST>(request);
  OCSP_REQUEST_free(request);
  return der;
}

std::string StatusOnlyResponse(int status) {
  OCSP_RESPONSE* response = OCSP_response_create(status, nullptr);
  Check(response != nullptr, "OCSP_response_create");
  std::string der = ToDer<OCSP_RESPONSE, i2d_OCSP_RESPONSE>(response);
  OCSP_RESPONSE_free(response);
  return der;
}

}  // namespace onepass::ocsp::testing
