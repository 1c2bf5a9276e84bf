// DNS over TCP (RFC 1035 §4.2.2, RFC 7766): builds length-prefixed queries and checks answers.
//
// Checks, in order: the length prefix, ID, QR, opcode, TC (never set over TCP), the question
// echoed byte for byte (RFC 1035 §4.1.2; case preserved as sent), every resource record in
// bounds (names, compression pointers, RDLENGTH), an OPT record exactly when the query had one
// (RFC 6891 §7), the expected RCODE (12 bits with EDNS), and at least one answer when NOERROR
// with answers is expected. Trailing bytes after the first whole message are not
// judged: the client closes once it has one message, whatever the server sends next.
#ifndef ONEPASS_LOADTEST_DNS_REQUEST_H_
#define ONEPASS_LOADTEST_DNS_REQUEST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "loadtest/protocol.h"

namespace onepass::load {

struct DnsQuery {
  std::string name;  // presentation form, e.g. "www.example.com."
  std::string type;  // mnemonic ("AAAA") or "TYPE65"
};

struct DnsCheckConfig {
  int expect_rcode = 0;        // RCODE the answers must carry; -1 accepts any
  bool expect_answers = true;  // with NOERROR expected: ANCOUNT must be > 0
  int edns_udp_size = 0;       // > 0: queries carry an OPT record with this payload size
  bool dnssec_ok = false;      // with EDNS: set the DO bit (RFC 3225)
};

// Parses "name type" lines ('#' starts a comment; blank lines skipped).
absl::StatusOr<std::vector<DnsQuery>> ParseDnsQueryList(absl::string_view text);

// "NOERROR" -> 0, "NXDOMAIN" -> 3, "any" -> -1, or a number 0..4095.
absl::StatusOr<int> ParseRcode(absl::string_view text);
// 0 -> "NOERROR", unknown -> "RCODE12".
std::string RcodeName(int rcode);

class DnsClient : public ProtocolClient {
 public:
  // Encodes every query once; fails on a bad name or type.
  static absl::StatusOr<std::unique_ptr<DnsClient>> Create(const std::vector<DnsQuery>& queries,
                                                           const DnsCheckConfig& config);

  absl::string_view name() const override { return "dns"; }
  // Query number sequence % queries, with ID = the low 16 bits of `random`, RD=0.
  void BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const override;
  CheckResult Check(absl::string_view request, absl::string_view response,
                    bool closed) const override;
  // The two-byte length prefix of RFC 1035 §4.2.2.
  size_t FrameLength(absl::string_view stream) const override;
  // The message ID (after the prefix); 0x10000 for a message too short to carry one.
  uint32_t MatchKey(absl::string_view message) const override;

 private:
  DnsClient(std::vector<std::string> wire_queries, const DnsCheckConfig& config)
      : wire_queries_(std::move(wire_queries)), config_(config) {}

  // Each query: 2-byte length prefix + header with ID 0 + question.
  std::vector<std::string> wire_queries_;
  DnsCheckConfig config_;
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_DNS_REQUEST_H_
