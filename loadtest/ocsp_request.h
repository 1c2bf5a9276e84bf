// OCSP over HTTP/1.1 (RFC 6960 Appendix A.1), one request per connection.
//
// Builds a POST with the DER request as body, or a GET with the URL-encoded base64 request in
// the path. Checks: status 200, Content-Type application/ocsp-response, a body that is exactly
// one DER OCSPResponse (OpenSSL d2i_OCSP_RESPONSE consuming every byte), the expected
// responseStatus and, when successful, that the basic response covers every CertID asked.
// The signature is not verified: the tester holds no trust anchor and judges the transport.
#ifndef ONEPASS_LOADTEST_OCSP_REQUEST_H_
#define ONEPASS_LOADTEST_OCSP_REQUEST_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "loadtest/protocol.h"

namespace onepass::load {

struct OcspClientConfig {
  std::string der_request;  // DER OCSPRequest
  bool use_get = false;     // GET {path}{base64} instead of POST
  std::string path = "/";   // request target (prefix for GET)
  std::string host;         // Host header (RFC 9112 §3.2 requires one)
  int expect_status = 0;    // OCSPResponseStatus (RFC 6960 §4.2.1); -1 accepts any
  size_t max_header_bytes = 16 * 1024;
};

// "successful" -> 0 ... "unauthorized" -> 6, "any" -> -1.
absl::StatusOr<int> ParseOcspStatus(absl::string_view text);

// RFC 6960 Appendix A.1: base64, then '+', '/' and '=' percent-encoded for a path segment.
std::string OcspGetPathSegment(absl::string_view der_request);

class OcspClient : public ProtocolClient {
 public:
  // Fails when der_request is not a DER OCSPRequest (a clear startup error, not N wrong answers).
  static absl::StatusOr<std::unique_ptr<OcspClient>> Create(const OcspClientConfig& config);
  ~OcspClient() override;

  absl::string_view name() const override { return "ocsp"; }
  void BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const override;
  CheckResult Check(absl::string_view request, absl::string_view response,
                    bool closed) const override;

 private:
  struct CertIds;
  OcspClient(const OcspClientConfig& config, std::string http_request,
             std::unique_ptr<CertIds> cert_ids);

  OcspClientConfig config_;
  std::string http_request_;
  std::unique_ptr<CertIds> cert_ids_;
  const uint64_t instance_;  // unique per client: keys the per-thread last-good-body cache
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_OCSP_REQUEST_H_
