// Certificates made at test time for the TLS layer's tests, fuzzer and benchmark: a CA and a
// leaf signed by it, EC P-256 keys (what a DoT operator should deploy), written as PEM files
// into a fresh temporary directory that is removed with the object.
#ifndef ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_PKI_H_
#define ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_PKI_H_

#include <string>

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

  // Writes `bytes` to dir()/name and returns the path.
  std::string WriteFile(const std::string& name, const std::string& bytes) const;

 private:
  std::string dir_;
  std::string chain_file_, key_file_, ca_file_, other_key_file_;
  std::string chain_pem_, key_pem_;
};

}  // namespace onepass::tls::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_TLS_TLS_TEST_PKI_H_
