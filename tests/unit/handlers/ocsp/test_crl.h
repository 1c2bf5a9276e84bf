// Makes CAs and DER CRLs with OpenSSL for the CRL tests (unit and end to end): every field
// the loader checks (issuer, times, signature) is under the test's control.
#ifndef ONEPASS_TESTS_UNIT_HANDLERS_OCSP_TEST_CRL_H_
#define ONEPASS_TESTS_UNIT_HANDLERS_OCSP_TEST_CRL_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"

namespace onepass::ocsp::testing {

class TestCrlIssuer {
 public:
  // A self-signed CA (EC P-256) named `common_name`. Aborts if OpenSSL fails (tests only).
  explicit TestCrlIssuer(const std::string& common_name);
  ~TestCrlIssuer();
  TestCrlIssuer(const TestCrlIssuer&) = delete;
  TestCrlIssuer& operator=(const TestCrlIssuer&) = delete;

  // A DER CRL signed by this CA with `revoked` serial numbers 1..revoked.
  std::string MakeCrl(absl::Time this_update, absl::Time next_update, int revoked = 3) const;
  // The CA certificate, PEM.
  std::string CertificatePem() const;
  // A leaf certificate (PEM) with serial `serial`, signed by this CA, whose CRL distribution
  // point (RFC 5280 §4.2.1.13) is `crl_url`.
  std::string IssueLeafPem(int64_t serial, const std::string& crl_url) const;

 private:
  struct Keys;
  std::unique_ptr<Keys> keys_;
};

}  // namespace onepass::ocsp::testing

#endif  // ONEPASS_TESTS_UNIT_HANDLERS_OCSP_TEST_CRL_H_
