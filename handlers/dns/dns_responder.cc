#include "handlers/dns/dns_responder.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

// RFC 6891 §6.1.2: root owner, TYPE, CLASS, TTL, RDLENGTH.
constexpr size_t kOptFixedBytes = 11;
constexpr size_t kEdeOptionBytes = kOptionHeaderBytes + 2;
constexpr size_t kKeepaliveOptionBytes = kOptionHeaderBytes + 2;

constexpr int kCountOffset[] = {6, 8, 8, 10, 10};  // ANCOUNT, NSCOUNT, NSCOUNT, ARCOUNT, ARCOUNT

void AddToCount(uint8_t* message, int offset, uint16_t n) {
  WriteU16(message + offset, static_cast<uint16_t>(ReadU16(message + offset) + n));
}

}  // namespace

DnsResponder::DnsResponder(std::shared_ptr<const ZoneSnapshot> snapshot, ResponderConfig config,
                           std::shared_ptr<const PrecompiledAnswers> precompiled)
    : snapshot_(std::move(snapshot)), precompiled_(std::move(precompiled)), config_(config) {
  plan_.entries.reserve(64);
}

Response DnsResponder::Respond(absl::Span<const uint8_t> message, absl::Span<uint8_t> out,
                               const QueryTransport& transport) {
  const uint16_t keepalive_timeout = transport.keepalive_timeout;
  Response response;
  if (message.size() < kHeaderBytes) {
    response.kind = Response::Kind::kClose;
    return response;
  }
  writer_.Start(out);
  ParseQuery(message, query_);
  // Only EDNS(0)'s options are understood (RFC 6891 §6.1.3): a BADVERS answer is not padded.
  pad_ =
      transport.encrypted && query_.edns.present && query_.edns.version == 0 && query_.edns.padding;
  padded_ = false;
  switch (query_.status) {
    case QueryStatus::kDrop:
      response.kind = Response::Kind::kDrop;
      return response;
    case QueryStatus::kFormErr:
      response.rcode = kRcodeFormErr;
      // NSD (query_formerr) sends the header alone, with no OPT: the OPT may be the problem.
      response.size = WriteError(
          {.rcode = kRcodeFormErr, .with_question = false, .with_opt = false, .ede = std::nullopt});
      break;
    case QueryStatus::kNotImp:
      response.rcode = kRcodeNotImp;
      response.size = WriteError(
          {.rcode = kRcodeNotImp, .with_question = false, .with_opt = false, .ede = std::nullopt});
      break;
    case QueryStatus::kNotAuth:
      response.rcode = kRcodeNotAuth;
      response.size = WriteError({.rcode = kRcodeNotAuth,
                                  .with_question = false,
                                  .with_opt = query_.edns.present,
                                  .ede = std::nullopt});
      break;
    case QueryStatus::kOk:
      response.dnssec_ok = query_.edns.present && query_.edns.do_bit;
      response.size = WritePrecompiled(keepalive_timeout, response);
      if (response.size == 0) {
        writer_.Start(out);  // drop whatever a precompiled answer too big for `out` left
        response.size = WriteAnswer(keepalive_timeout, response);
      }
      break;
  }

  if (response.size == 0) response.kind = Response::Kind::kClose;  // no room even for a header
  response.padded = response.size > 0 && padded_;
  return response;
}

bool DnsResponder::WriteHeaderAndQuestion(uint16_t flags, bool with_question) {
  uint8_t header[kHeaderBytes] = {};
  WriteU16(header, query_.id);
  WriteU16(header + 2, flags);
  WriteU16(header + 4, with_question ? 1 : 0);
  if (!writer_.WriteBytes(header, sizeof(header))) return false;
  if (!with_question) return true;
  // The question as asked, case preserved (RFC 4343 §4.1); answers compress against it.
  return writer_.WriteName(query_.qname, query_.qname_size) && writer_.WriteU16(query_.qtype) &&
         writer_.WriteU16(query_.qclass);
}

size_t DnsResponder::WriteError(const ErrorReply& reply) {
  const uint16_t rcode = reply.rcode;
  // Keep the opcode and RD of the query (RFC 1035 §4.1.1); clear the other bits.
  const uint16_t flags = kFlagQr | (query_.flags & (kOpcodeMask | kFlagRd)) | (rcode & kRcodeMask);
  if (!WriteHeaderAndQuestion(flags, reply.with_question)) return 0;
  if (reply.with_opt && !WriteOpt(static_cast<uint8_t>(rcode >> 4), reply.ede, 0)) return 0;
  return writer_.size();
}

size_t DnsResponder::WritePrecompiled(uint16_t keepalive_timeout, Response& response) {
  if (precompiled_ == nullptr || query_.qclass != kClassIn ||
      (query_.edns.present && query_.edns.version != 0)) {
    return 0;
  }
  const std::optional<PrecompiledAnswers::Answer> found =
      precompiled_->Find(query_.answer_key(), query_.edns.present && query_.edns.do_bit);
  if (!found.has_value()) return 0;
  const std::string* answer = found->bytes;
  const bool echo_keepalive = query_.edns.present && query_.edns.keepalive && keepalive_timeout > 0;
  if (!writer_.WriteBytes(answer->data(), answer->size())) return 0;
  uint8_t* message = writer_.data();
  WriteU16(message, query_.id);
  message[2] |= static_cast<uint8_t>((query_.flags & kFlagRd) >> 8);
  // Same length as the canonical name it replaces: the pointers to offset 12 stay valid.
  std::memcpy(message + kHeaderBytes, query_.qname, query_.qname_size);
  if (query_.edns.present) {
    if (!WriteOpt(0, std::nullopt, echo_keepalive ? keepalive_timeout : 0)) return 0;
    response.keepalive = echo_keepalive;
  }
  response.rcode = found->rcode;
  response.answer_kind = found->kind;
  response.wildcard = found->wildcard;
  response.precompiled = true;
  return writer_.size();
}

size_t DnsResponder::WriteAnswer(uint16_t keepalive_timeout, Response& response) {
  const bool edns = query_.edns.present;
  // RFC 6891 §6.1.3: we implement version 0 only; BADVERS carries the question (as NSD).
  if (edns && query_.edns.version != 0) {
    response.rcode = kRcodeBadVers;
    return WriteError(
        {.rcode = kRcodeBadVers, .with_question = true, .with_opt = true, .ede = std::nullopt});
  }
  if (query_.qclass != kClassIn && query_.qclass != kClassAny) {
    // Only IN is served. NSD keeps the question for CHAOS (its id.server class) only.
    response.rcode = kRcodeRefused;
    return WriteError({.rcode = kRcodeRefused,
                       .with_question = query_.qclass == kClassCh,
                       .with_opt = edns,
                       .ede = kEdeNotSupported});
  }
  if (query_.qtype == kTypeAxfr || query_.qtype == kTypeIxfr) {
    // Zone transfers are not this server's job (RFC 5936 §4.2 allows refusing them).
    response.rcode = kRcodeRefused;
    return WriteError(
        {.rcode = kRcodeRefused, .with_question = true, .with_opt = edns, .ede = std::nullopt});
  }
  PlanAnswer(*snapshot_, query_.canonical_qname(), query_.qtype, query_.qclass,
             edns && query_.edns.do_bit, plan_);
  response.rcode = plan_.rcode;
  response.answer_kind = plan_.kind;
  response.wildcard = plan_.wildcard;
  // RFC 1035 §4.1.1 / NSD query_prepare_response: copy RD, clear the rest (CD, AD, Z).
  uint16_t flags = kFlagQr | (query_.flags & kFlagRd) | (plan_.rcode & kRcodeMask);
  if (plan_.authoritative) flags |= kFlagAa;
  if (!WriteHeaderAndQuestion(flags, true)) return 0;
  const bool echo_keepalive = edns && query_.edns.keepalive && keepalive_timeout > 0;
  const size_t opt_bytes = edns ? kOptFixedBytes + (plan_.ede.has_value() ? kEdeOptionBytes : 0) +
                                      (echo_keepalive ? kKeepaliveOptionBytes : 0)
                                : 0;
  writer_.Reserve(opt_bytes);
  bool truncated = false;
  for (int section = 0; section < kSectionCount && !truncated; ++section) {
    for (const PlanEntry& entry : plan_.entries) {
      if (static_cast<int>(entry.section) != section) continue;
      const size_t before = writer_.size();
      bool fits = true;
      for (const Record& record : entry.rrset->records) {
        if (!writer_.WriteRecord(entry.owner, entry.rrset->type, record)) {
          fits = false;
          break;
        }
      }
      // RFC 4035 §3.1.1: the RRSIGs with their RRset, in the same section (NSD sends the SOA's
      // with the SOA's TTL; the loader set them so).
      const uint16_t signatures =
          entry.with_signatures ? static_cast<uint16_t>(entry.rrset->signatures.size()) : 0;
      for (int i = 0; fits && i < signatures; ++i) {
        fits = writer_.WriteRecord(entry.owner, kTypeRrsig, *entry.rrset->signatures[i]);
      }
      if (!fits) {
        // Whole RRsets only (RFC 2181 §9). Over TCP this needs an answer near 64 KiB.
        writer_.Rollback(before);
        truncated = true;
        if (entry.section <= Section::kAuthority) flags |= kFlagTc;
        break;
      }
      AddToCount(writer_.data(), kCountOffset[section],
                 static_cast<uint16_t>(entry.rrset->records.size() + signatures));
    }
  }
  WriteU16(writer_.data() + 2, flags);
  writer_.Unreserve(opt_bytes);
  if (edns) {
    if (!WriteOpt(0, plan_.ede, echo_keepalive ? keepalive_timeout : 0)) return 0;
    response.keepalive = echo_keepalive;
  }
  return writer_.size();
}

bool DnsResponder::WriteOpt(uint8_t extended_rcode, std::optional<uint16_t> ede,
                            uint16_t keepalive_timeout) {
  const size_t options =
      (ede.has_value() ? kEdeOptionBytes : 0) + (keepalive_timeout > 0 ? kKeepaliveOptionBytes : 0);
  const size_t opt_bytes = kOptFixedBytes + options;
  const size_t padding =
      pad_ ? PaddingOptionBytes(writer_.size() + opt_bytes,
                                writer_.room() - std::min(writer_.room(), opt_bytes))
           : 0;
  const auto rdlength = static_cast<uint16_t>(options + padding);
  const uint8_t root = 0;
  // TTL: EXTENDED-RCODE, VERSION 0, then the DO bit echoed (RFC 3225 §3).
  const uint32_t ttl = (uint32_t{extended_rcode} << 24) | (query_.edns.do_bit ? kEdnsFlagDo : 0);
  if (!writer_.WriteBytes(&root, 1) || !writer_.WriteU16(kTypeOpt) ||
      !writer_.WriteU16(config_.edns_udp_size) || !writer_.WriteU32(ttl) ||
      !writer_.WriteU16(rdlength)) {
    return false;
  }
  if (ede.has_value()) {
    // RFC 8914 §2: INFO-CODE without EXTRA-TEXT.
    if (!writer_.WriteU16(kOptionEde) || !writer_.WriteU16(2) || !writer_.WriteU16(*ede)) {
      return false;
    }
  }
  if (keepalive_timeout > 0) {
    // RFC 7828 §3.1: TIMEOUT in units of 100 ms.
    if (!writer_.WriteU16(kOptionTcpKeepalive) || !writer_.WriteU16(2) ||
        !writer_.WriteU16(keepalive_timeout)) {
      return false;
    }
  }
  if (padding > 0) {
    // RFC 7830 §3: PADDING octets of 0x00; the option goes last, once the size is known.
    const size_t zeros = padding - kOptionHeaderBytes;
    if (!writer_.WriteU16(kOptionPadding) || !writer_.WriteU16(static_cast<uint16_t>(zeros)) ||
        !writer_.WriteZeros(zeros)) {
      return false;
    }
    padded_ = true;
  }
  AddToCount(writer_.data(), 10, 1);
  return true;
}

}  // namespace onepass::dns
