// A throwaway CA in memory that signs OCSP responses and builds OCSP requests with OpenSSL, so
// the OCSP unit tests, benchmarks and fuzzers need no files and control every field (times,
// several SingleResponses, hash algorithms). scripts/make-ocsp-testdata.sh does the same with
// the openssl command for the end-to-end tests.
#ifndef ONEPASS_TESTS_UNIT_HANDLERS_OCSP_OCSP_TEST_PKI_H_
#define ONEPASS_TESTS_UNIT_HANDLERS_OCSP_OCSP_TEST_PKI_H_

#include <openssl/evp.h>
#include <openssl/ocsp.h>
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/optional.h"

namespace onepass::ocsp::testing {

enum class CertStatus { kGood, kRevoked, kUnknown };

// One certificate of the test CA, by serial number.
struct CertRef {
  int64_t serial = 0;
  CertStatus status = CertStatus::kGood;  // used by SignResponse only
  const EVP_MD* hash = nullptr;           // CertID hash; nullptr = SHA-1
};

class TestPki {
 public:
  // A new CA (EC P-256 key, self-signed). Never null: aborts if OpenSSL fails (tests only).
  static std::unique_ptr<TestPki> Create(const std::string& common_name = "onepass unit test CA");
  ~TestPki();

  // A successful basic OCSPResponse (DER) signed by the CA, one SingleResponse per cert.
  std::string SignResponse(const std::vector<CertRef>& certs, absl::Time this_update,
                           absl::optional<absl::Time> next_update) const;

  // Like SignResponse, for the CertIDs of an existing DER OCSPRequest (whatever CA they name):
  // lets a fuzzer's fixed seed requests hit its snapshot. Empty if `request_der` does not parse.
  std::string SignResponseForRequest(const std::string& request_der, CertStatus status,
                                     absl::Time this_update, absl::Time next_update) const;

  // A DER OCSPRequest with one Request per cert, optionally with a nonce extension.
  std::string MakeRequest(const std::vector<CertRef>& certs, bool nonce = false) const;

 private:
  TestPki() = default;
  OCSP_CERTID* NewCertId(const CertRef& cert) const;

  EVP_PKEY* key_ = nullptr;
  X509* cert_ = nullptr;
};

// The unsigned OCSPResponse with only a status (e.g. 6 = unauthorized), as DER.
std::string StatusOnlyResponse(int status);

}  // namespace onepass::ocsp::testing

#endif  // ONEPASS_TESTS_UNIT_HANDLERS_OCSP_OCSP_TEST_PKI_H_
