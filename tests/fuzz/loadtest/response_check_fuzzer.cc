// Fuzzes the load tester's response checkers with hostile server replies: no crash, no
// leak, and the split-invariance contract of ProtocolClient::Check holds: the first verdict
// reached on a growing prefix is the verdict of the whole reply.
//
// Input: byte 0 picks the protocol (dns, ocsp, whois, raw, dns with EDNS); byte 1 bit 0 says
// whether the server closed after the rest; the rest is the reply.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "loadtest/dns_request.h"
#include "loadtest/ocsp_request.h"
#include "loadtest/whois_request.h"

namespace {

using onepass::load::CheckResult;
using onepass::load::ProtocolClient;
using onepass::load::Verdict;

// tests/unit/loadtest/testdata/request.der: an OCSPRequest for one certificate.
const unsigned char kOcspRequest[] = {
    0x30, 0x4a, 0x30, 0x48, 0x30, 0x46, 0x30, 0x44, 0x30, 0x42, 0x30, 0x09, 0x06, 0x05, 0x2b, 0x0e,
    0x03, 0x02, 0x1a, 0x05, 0x00, 0x04, 0x14, 0x30, 0xa2, 0xf3, 0x16, 0xf6, 0x9c, 0x58, 0xd5, 0x70,
    0xed, 0x4e, 0x2f, 0x0a, 0xd5, 0xbb, 0x1f, 0xa9, 0x6c, 0x3a, 0xc7, 0x04, 0x14, 0x64, 0x83, 0x3f,
    0x0f, 0x22, 0x3a, 0x3c, 0xd5, 0x24, 0x03, 0x77, 0x9f, 0x8d, 0xe6, 0xf1, 0x62, 0x1d, 0x26, 0x31,
    0x53, 0x02, 0x09, 0x00, 0x80, 0x6d, 0xaa, 0x39, 0x3c, 0x3f, 0xd1, 0xd9};

struct Clients {
  std::unique_ptr<ProtocolClient> clients[5];
  Clients() {
    clients[0] = std::move(*onepass::load::DnsClient::Create({{"www.example.com.", "A"}}, {}));
    onepass::load::OcspClientConfig ocsp;
    ocsp.der_request.assign(reinterpret_cast<const char*>(kOcspRequest), sizeof(kOcspRequest));
    ocsp.host = "127.0.0.1";
    ocsp.max_header_bytes = 512;
    clients[1] = std::move(*onepass::load::OcspClient::Create(ocsp));
    clients[2] = std::make_unique<onepass::load::WhoisClient>("example.com", "EXAMPLE");
    clients[3] = std::make_unique<onepass::load::RawClient>("x", "");
    onepass::load::DnsCheckConfig edns;
    edns.edns_udp_size = 1232;
    edns.dnssec_ok = true;
    edns.expect_rcode = -1;
    clients[4] = std::move(*onepass::load::DnsClient::Create({{"example.com.", "MX"}}, edns));
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Clients* all = new Clients();
  if (size < 2 || size > 8192) return 0;
  const ProtocolClient& client = *all->clients[data[0] % 5];
  bool closed = (data[1] & 1) != 0;
  std::string reply(reinterpret_cast<const char*>(data + 2), size - 2);
  std::string request;
  // The DNS ID is taken from the reply's bytes 2-3 half of the time, so that the checks past
  // the ID are reached.
  uint32_t id = reply.size() >= 4 && (data[1] & 2) != 0
                    ? (static_cast<uint8_t>(reply[2]) << 8) | static_cast<uint8_t>(reply[3])
                    : 0x1234;
  client.BuildRequest(0, id, &request);

  CheckResult whole = client.Check(request, reply, closed);
  if (closed && whole.verdict == Verdict::kIncomplete) std::abort();  // must judge at close
  // The first definite verdict on a growing prefix (the client stops reading there).
  for (size_t length = 0; length <= reply.size(); ++length) {
    CheckResult prefix = client.Check(request, absl::string_view(reply).substr(0, length), false);
    if (prefix.verdict == Verdict::kIncomplete) continue;
    if (prefix.verdict != whole.verdict || std::strcmp(prefix.reason, whole.reason) != 0) {
      std::abort();
    }
    break;
  }
  return 0;
}
