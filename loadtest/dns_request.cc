#include "loadtest/dns_request.h"

#include <ldns/ldns.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace onepass::load {
namespace {

constexpr size_t kHeaderSize = 12;  // RFC 1035 §4.1.1

uint16_t Read16(absl::string_view bytes, size_t offset) {
  return static_cast<uint16_t>((static_cast<uint8_t>(bytes[offset]) << 8) |
                               static_cast<uint8_t>(bytes[offset + 1]));
}

struct RdfDeleter {
  void operator()(ldns_rdf* rdf) const { ldns_rdf_deep_free(rdf); }
};

// Skips one (possibly compressed) name starting at `*offset` in `message` (RFC 1035 §4.1.4).
// Returns false if it runs out of bounds or a label type is reserved.
bool SkipName(absl::string_view message, size_t* offset) {
  size_t at = *offset;
  while (true) {
    if (at >= message.size()) return false;
    uint8_t length = static_cast<uint8_t>(message[at]);
    if ((length & 0xC0) == 0xC0) {
      // A pointer ends the name here; its target is not followed (only bounds matter).
      if (at + 2 > message.size()) return false;
      if ((Read16(message, at) & 0x3FFF) >= message.size()) return false;
      *offset = at + 2;
      return true;
    }
    if ((length & 0xC0) != 0) return false;  // 0x40 and 0x80 label types: RFC 6891 §5
    ++at;
    if (length == 0) {
      *offset = at;
      return true;
    }
    at += length;
  }
}

}  // namespace

absl::StatusOr<std::vector<DnsQuery>> ParseDnsQueryList(absl::string_view text) {
  std::vector<DnsQuery> queries;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    size_t hash = line.find('#');
    if (hash != absl::string_view::npos) line = line.substr(0, hash);
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, ": expected \"name type\", got \"", line, "\""));
    }
    queries.push_back({std::string(fields[0]), std::string(fields[1])});
  }
  if (queries.empty()) return absl::InvalidArgumentError("no queries in the list");
  return queries;
}

absl::StatusOr<int> ParseRcode(absl::string_view text) {
  if (absl::EqualsIgnoreCase(text, "any")) return -1;
  int number = 0;
  if (absl::SimpleAtoi(text, &number)) {
    if (number < 0 || number > 4095) {  // 12 bits with EDNS (RFC 6891 §6.1.3)
      return absl::InvalidArgumentError(absl::StrCat("rcode out of range 0..4095: ", text));
    }
    return number;
  }
  std::string upper = absl::AsciiStrToUpper(text);
  ldns_lookup_table* entry = ldns_lookup_by_name(ldns_rcodes, upper.c_str());
  if (entry == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown rcode: ", text));
  return entry->id;
}

std::string RcodeName(int rcode) {
  ldns_lookup_table* entry = ldns_lookup_by_id(ldns_rcodes, rcode);
  if (entry == nullptr) return absl::StrCat("RCODE", rcode);
  return entry->name;
}

absl::StatusOr<std::unique_ptr<DnsClient>> DnsClient::Create(const std::vector<DnsQuery>& queries,
                                                             const DnsCheckConfig& config) {
  if (queries.empty()) return absl::InvalidArgumentError("no DNS queries given");
  std::vector<std::string> wire;
  for (const DnsQuery& query : queries) {
    std::unique_ptr<ldns_rdf, RdfDeleter> name(ldns_dname_new_frm_str(query.name.c_str()));
    if (name == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("bad query name: \"", query.name, "\""));
    }
    std::string upper_type = absl::AsciiStrToUpper(query.type);
    ldns_rr_type type = ldns_get_rr_type_by_name(upper_type.c_str());
    if (type == 0) {
      return absl::InvalidArgumentError(absl::StrCat("unknown query type: \"", query.type, "\""));
    }
    std::string message(kHeaderSize, '\0');
    message[5] = 1;  // QDCOUNT = 1; ID patched per query; flags 0: standard query, RD=0
    message.append(reinterpret_cast<const char*>(ldns_rdf_data(name.get())),
                   ldns_rdf_size(name.get()));
    message.push_back(static_cast<char>(type >> 8));
    message.push_back(static_cast<char>(type & 0xFF));
    message.push_back(0);
    message.push_back(1);  // class IN
    if (config.edns_udp_size > 0) {
      // OPT pseudo-RR (RFC 6891 §6.1.2): root owner, type 41, CLASS = UDP payload size, TTL =
      // extended RCODE 0, version 0, DO flag; no options.
      message[11] = 1;  // ARCOUNT
      const char opt[] = {0,
                          0,
                          41,
                          static_cast<char>(config.edns_udp_size >> 8),
                          static_cast<char>(config.edns_udp_size & 0xFF),
                          0,
                          0,
                          static_cast<char>(config.dnssec_ok ? 0x80 : 0),
                          0,
                          0,
                          0};
      message.append(opt, sizeof(opt));
    }
    std::string framed;
    framed.push_back(static_cast<char>(message.size() >> 8));  // RFC 1035 §4.2.2 prefix
    framed.push_back(static_cast<char>(message.size() & 0xFF));
    framed += message;
    wire.push_back(std::move(framed));
  }
  return std::unique_ptr<DnsClient>(new DnsClient(std::move(wire), config));
}

void DnsClient::BuildRequest(uint64_t sequence, uint32_t random, std::string* out) const {
  *out = wire_queries_[sequence % wire_queries_.size()];
  (*out)[2] = static_cast<char>((random >> 8) & 0xFF);
  (*out)[3] = static_cast<char>(random & 0xFF);
}

CheckResult DnsClient::Check(absl::string_view request, absl::string_view response,
                             bool closed) const {
  if (response.size() < 2) {
    if (!closed) return CheckResult::Incomplete();
    return response.empty() ? CheckResult::Short("closed without a reply")
                            : CheckResult::Short("closed inside the length prefix");
  }
  size_t length = Read16(response, 0);
  if (length < kHeaderSize) {
    return CheckResult::Wrong("length prefix below header size",
                              absl::StrCat("length prefix ", length));
  }
  if (response.size() < 2 + length) {
    if (!closed) return CheckResult::Incomplete();
    return CheckResult::Short("closed inside the message",
                              absl::StrCat("got ", response.size() - 2, " of ", length, " bytes"));
  }
  absl::string_view message = response.substr(2, length);
  absl::string_view query = request.substr(2);
  uint16_t id = Read16(message, 0);
  uint16_t expected_id = Read16(query, 0);
  if (id != expected_id) {
    return CheckResult::Wrong("wrong ID",
                              absl::StrFormat("ID 0x%04x, expected 0x%04x", id, expected_id));
  }
  uint8_t flags1 = static_cast<uint8_t>(message[2]);
  uint8_t flags2 = static_cast<uint8_t>(message[3]);
  if ((flags1 & 0x80) == 0) return CheckResult::Wrong("QR bit not set");
  if (((flags1 >> 3) & 0x0F) != ((static_cast<uint8_t>(query[2]) >> 3) & 0x0F)) {
    return CheckResult::Wrong("wrong opcode");
  }
  if ((flags1 & 0x02) != 0) return CheckResult::Wrong("TC set over TCP");  // RFC 7766 §8
  int rcode = flags2 & 0x0F;
  uint16_t qdcount = Read16(message, 4);
  uint16_t ancount = Read16(message, 6);
  uint16_t nscount = Read16(message, 8);
  uint16_t arcount = Read16(message, 10);
  // An error answer may come without the question (RFC 6891 §7 allows it for FORMERR and
  // NOTIMP); every other answer echoes it byte for byte.
  size_t question_end = kHeaderSize;
  if (!SkipName(query, &question_end) || question_end + 4 > query.size()) {
    return CheckResult::Wrong("malformed request");  // only with a request not built here
  }
  absl::string_view question = query.substr(kHeaderSize, question_end + 4 - kHeaderSize);
  bool request_has_opt = Read16(query, 10) != 0;
  size_t offset = kHeaderSize;
  if (qdcount == 1) {
    if (message.size() < kHeaderSize + question.size() ||
        message.substr(kHeaderSize, question.size()) != question) {
      return CheckResult::Wrong("question not echoed");
    }
    offset += question.size();
  } else if (qdcount != 0 || rcode == 0) {
    return CheckResult::Wrong("question count not 1", absl::StrCat("QDCOUNT ", qdcount));
  }
  uint32_t records = uint32_t{ancount} + nscount + arcount;
  int opt_count = 0;
  int extended_rcode = 0;  // upper 8 bits of the 12-bit RCODE, from the OPT TTL
  for (uint32_t i = 0; i < records; ++i) {
    if (!SkipName(message, &offset) || offset + 10 > message.size()) {
      return CheckResult::Wrong("malformed record",
                                absl::StrCat("record ", i + 1, " of ", records, " out of bounds"));
    }
    if (i >= uint32_t{ancount} + nscount && Read16(message, offset) == 41) {  // OPT
      ++opt_count;
      extended_rcode = static_cast<uint8_t>(message[offset + 4]);
    }
    size_t rdlength = Read16(message, offset + 8);
    offset += 10 + rdlength;
    if (offset > message.size()) {
      return CheckResult::Wrong("malformed record",
                                absl::StrCat("record ", i + 1, " RDLENGTH past the end"));
    }
  }
  if (offset != message.size()) {
    return CheckResult::Wrong("malformed record",
                              absl::StrCat(message.size() - offset, " bytes after the records"));
  }
  // RFC 6891 §7: an OPT in the reply if and only if the query had one; §6.1.1: at most one.
  if (opt_count > 1) return CheckResult::Wrong("more than one OPT record");
  if (request_has_opt && opt_count == 0) {
    return CheckResult::Wrong("no OPT in reply to an EDNS query");
  }
  if (!request_has_opt && opt_count > 0) {
    return CheckResult::Wrong("OPT in reply to a query without EDNS");
  }
  rcode |= extended_rcode << 4;
  if (config_.expect_rcode >= 0 && rcode != config_.expect_rcode) {
    return CheckResult::Wrong(
        "unexpected rcode",
        absl::StrCat("rcode ", RcodeName(rcode), ", expected ", RcodeName(config_.expect_rcode)));
  }
  if (config_.expect_answers && config_.expect_rcode == 0 && ancount == 0) {
    return CheckResult::Wrong("no answer records", "NOERROR with ANCOUNT 0");
  }
  return CheckResult::Ok();
}

size_t DnsClient::FrameLength(absl::string_view stream) const {
  if (stream.size() < 2) return 0;
  const size_t length = (static_cast<uint8_t>(stream[0]) << 8) | static_cast<uint8_t>(stream[1]);
  return stream.size() < 2 + length ? 0 : 2 + length;
}

uint32_t DnsClient::MatchKey(absl::string_view message) const {
  if (message.size() < 4) return 0x10000;
  return (static_cast<uint8_t>(message[2]) << 8) | static_cast<uint8_t>(message[3]);
}

}  // namespace onepass::load
