// Certificates made at test time for the TLS layer's tests, fuzzer and benchmark: a CA and a
// leaf signed by it, EC P-256 keys (what a DoT operator should deploy), written as PEM files
// into a fresh temporary directory that is removed with the object, or at exit where the object
// is never destroyed (a fuzzer's or a fixture's that lives as long as the process).
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_PKI_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_PKI_H_

#include <openssl/evp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace onepass::tls::testing {

struct TestCertOptions {
  absl::Time not_before = absl::Now() - absl::Hours(1);
  absl::Time not_after = absl::Now() + absl::Hours(24 * 365);
  std::string common_name = "dot.example.test";
};

class TestPkiDir {
 public:
  // Aborts if it cannot (tests only).
  explicit TestPkiDir(const TestCertOptions& options = {});
  ~TestPkiDir();
  TestPkiDir(const TestPkiDir&) = delete;
  TestPkiDir& operator=(const TestPkiDir&) = delete;

  const std::string& dir() const { return dir_; }
  const std::string& chain_file() const { return chain_file_; }          // leaf, then the CA
  const std::string& key_file() const { return key_file_; }              // the leaf's key
  const std::string& ca_file() const { return ca_file_; }                // for clients that verify
  const std::string& other_key_file() const { return other_key_file_; }  // belongs to nothing
  const std::string& chain_pem() const { return chain_pem_; }
  const std::string& key_pem() const { return key_pem_; }
  // The chain as DER certificates, leaf first (what a Certificate message carries).
  const std::vector<std::vector<uint8_t>>& chain_der() const { return chain_der_; }
  // The leaf's private key, parsed anew from key_pem(); the caller frees it (EVP_PKEY_free).
  // Null if libcrypto cannot read it.
  EVP_PKEY* NewPrivateKey() const;

  // Writes `bytes` to dir()/name and returns the path.
  std::string WriteFile(const std::string& name, const std::string& bytes) const;

 private:
  std::string dir_;
  std::string chain_file_, key_file_, ca_file_, other_key_file_;
  std::string chain_pem_, key_pem_;
  std::vector<std::vector<uint8_t>> chain_der_;
};

}  // namespace onepass::tls::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_PKI_H_
