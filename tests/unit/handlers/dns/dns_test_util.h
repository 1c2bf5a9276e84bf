// Test helpers for the DNS handler: queries built and responses decoded with ldns, which is
// independent of the handler's own wire code, and responses reduced to comparable text.
#ifndef ONEPASS_TESTS_UNIT_HANDLERS_DNS_DNS_TEST_UTIL_H_
#define ONEPASS_TESTS_UNIT_HANDLERS_DNS_DNS_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "handlers/dns/zone_snapshot.h"

namespace onepass::dns::testing {

struct QueryOptions {
  uint16_t id = 0x1234;
  bool rd = true;
  bool cd = false;      // checking disabled (RFC 4035 §3.2.2)
  uint16_t qclass = 1;  // IN
  bool edns = false;
  bool do_bit = false;
  uint8_t edns_version = 0;
  bool keepalive = false;    // add an empty edns-tcp-keepalive option (RFC 7828)
  int padding = -1;          // >= 0: add a Padding option of that many zero bytes (RFC 7830)
  uint8_t padding_byte = 0;  // what those bytes are (RFC 7830 §3: any value is accepted)
};

// A query message (no length prefix) built with ldns. `name` in presentation format.
std::vector<uint8_t> MakeQuery(const std::string& name, const std::string& type,
                               const QueryOptions& options = {});
// With the two-byte length prefix of RFC 1035 §4.2.2.
std::vector<uint8_t> Framed(const std::vector<uint8_t>& message);

// A response reduced to what two servers must agree on. Records are ldns presentation text,
// lowercased, sorted within each section (order within a section carries no meaning).
struct DecodedResponse {
  uint16_t id = 0;
  int rcode = 0;  // including the extended bits of an OPT
  bool qr = false, aa = false, tc = false, rd = false, ra = false, ad = false, cd = false;
  int opcode = 0;
  std::vector<std::string> question;
  std::vector<std::string> answer;
  std::vector<std::string> authority;
  std::vector<std::string> additional;  // without the OPT
  bool has_opt = false;
  uint16_t opt_udp_size = 0;
  bool opt_do = false;
  int opt_version = 0;
  std::vector<std::string> opt_options;  // "code:hex"

  std::string ToString() const;
};

absl::StatusOr<DecodedResponse> DecodeResponse(const uint8_t* data, size_t size);
inline absl::StatusOr<DecodedResponse> DecodeResponse(const std::vector<uint8_t>& bytes) {
  return DecodeResponse(bytes.data(), bytes.size());
}

// The embedded default zone as a snapshot (fails the test on error).
std::shared_ptr<const ZoneSnapshot> DefaultSnapshot();

// Canonical (lowercase) wire form of a presentation name ("www.example.org.").
std::string WireName(const std::string& text);

// One query answered by a fresh responder over `snapshot` (no precompiled answers), decoded.
absl::StatusOr<DecodedResponse> Ask(std::shared_ptr<const ZoneSnapshot> snapshot,
                                    const std::string& name, const std::string& type,
                                    const QueryOptions& options = {});

// The RDATA ldns makes of one record's presentation RDATA (`type_text` "NSEC3", "TYPE65280"...;
// relative names completed with `origin`, absolute presentation), or its error: the reference
// the zone reader's fast paths are held to (handlers/dns/zone_text_dnssec.h).
absl::StatusOr<std::string> LdnsRdata(const std::string& type_text, const std::string& rdata_text,
                                      const std::string& origin = ".");

// What the zone reader's fast path (zone_text_dnssec.h) makes of a DS, RRSIG or NSEC3 RDATA,
// its tokens split at blanks and the RRSIG signer completed with `origin`: true with the bytes
// in `rdata`, or false where it leaves the record to ldns (any other type too).
bool FastDnssecRdata(const std::string& type_text, const std::string& rdata_text,
                     const std::string& origin, std::string& rdata);

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_UNIT_HANDLERS_DNS_DNS_TEST_UTIL_H_
