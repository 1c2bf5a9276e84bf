#include "handlers/dns/frontend_local_answer.h"

#include <algorithm>
#include <cstring>

#include "handlers/dns/dns_query.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

// An OPT record (RFC 6891 §6.1.2) holding one EDE option without EXTRA-TEXT (RFC 8914 §2).
constexpr size_t kOptWithEdeBytes = 11 + 4 + 2;

}  // namespace

bool AppendLocalAnswer(const LocalAnswer& answer, OutputBuffer& out) {
  bool with_opt = false;
  bool do_bit = false;
  bool pad = false;
  if (answer.ede.has_value() && answer.query.size() >= kHeaderBytes) {
    // The query's OPT, read by the zone mode's parser (fuzzed through dns_handler_fuzzer). Rare:
    // only for an answer of our own, never on the forwarding path.
    ParsedQuery parsed;
    ParseQuery(answer.query, parsed);
    with_opt = parsed.edns.present;
    do_bit = parsed.edns.do_bit;
    // As DnsResponder: EDNS(0)'s option only, over an encrypted connection only.
    pad = answer.encrypted && with_opt && parsed.edns.version == 0 && parsed.edns.padding;
  }
  const size_t unpadded = kHeaderBytes + answer.question.size() + (with_opt ? kOptWithEdeBytes : 0);
  absl::Span<uint8_t> tail = out.WritableTail();
  if (tail.size() < kLengthPrefixBytes + unpadded) return false;
  const size_t room = std::min(tail.size() - kLengthPrefixBytes, kMaxMessageBytes) - unpadded;
  const size_t padding = pad ? PaddingOptionBytes(unpadded, room) : 0;
  const size_t size = unpadded + padding;
  uint8_t* p = tail.data();
  WriteU16(p, static_cast<uint16_t>(size));
  p += kLengthPrefixBytes;
  std::memset(p, 0, kHeaderBytes);
  WriteU16(p, answer.id);
  // QR, the opcode, RD (0x0100) and CD (0x0010) of the query; the RCODE.
  WriteU16(p + 2, static_cast<uint16_t>(0x8000 | (answer.query_flags & 0x7910) | answer.rcode));
  WriteU16(p + 4, answer.question.empty() ? 0 : 1);
  WriteU16(p + 10, with_opt ? 1 : 0);
  uint8_t* at = p + kHeaderBytes;
  if (!answer.question.empty()) {
    std::memcpy(at, answer.question.data(), answer.question.size());
    at += answer.question.size();
  }
  if (with_opt) {
    at[0] = 0;  // the root name
    WriteU16(at + 1, kTypeOpt);
    WriteU16(at + 3, kLocalAnswerUdpSize);
    // TTL: extended RCODE 0, version 0, DO copied from the query (RFC 3225 §3).
    WriteU32(at + 5, do_bit ? uint32_t{kEdnsFlagDo} : 0);
    WriteU16(at + 9, static_cast<uint16_t>(6 + padding));  // RDLENGTH: EDE, then padding
    WriteU16(at + 11, kOptionEde);
    WriteU16(at + 13, 2);
    WriteU16(at + 15, *answer.ede);
    if (padding > 0) {
      // RFC 7830 §3: zero octets, the option last.
      WriteU16(at + kOptWithEdeBytes, kOptionPadding);
      WriteU16(at + kOptWithEdeBytes + 2, static_cast<uint16_t>(padding - kOptionHeaderBytes));
      std::memset(at + kOptWithEdeBytes + kOptionHeaderBytes, 0, padding - kOptionHeaderBytes);
    }
  }
  out.CommitMessage(kLengthPrefixBytes + size);
  return true;
}

}  // namespace onepass::dns
