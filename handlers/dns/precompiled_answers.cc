#include "handlers/dns/precompiled_answers.h"

#include <utility>
#include <vector>

#include "handlers/dns/dns_responder.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

namespace {

// RFC 6891 §6.1.2: our OPT without options is 11 bytes: root, TYPE, CLASS, TTL, RDLENGTH 0.
constexpr size_t kBareOptBytes = 11;

// Renders the answer to a lowercase RD=0 query with ID 0 for `name` and `type`, with an OPT
// carrying DO when `dnssec_ok`; returns false when it is not a candidate (no answer, or
// truncated: near 64 KiB the normal path reserves room for the OPT). The DO rendering is
// returned without its OPT, which Respond appends per query.
bool Render(DnsResponder& responder, absl::string_view name, uint16_t type, bool dnssec_ok,
            std::vector<uint8_t>& query, std::vector<uint8_t>& out, std::string& answer,
            Response& response) {
  // ID 0, flags 0, QDCOUNT 1; the canonical name; QTYPE; QCLASS IN.
  query.assign(kHeaderBytes, 0);
  query[5] = 1;
  query.insert(query.end(), name.begin(), name.end());
  query.insert(query.end(), {static_cast<uint8_t>(type >> 8), static_cast<uint8_t>(type), 0,
                             static_cast<uint8_t>(kClassIn)});
  if (dnssec_ok) {
    query[11] = 1;  // ARCOUNT
    // Root, OPT, UDP size 1232, extended RCODE 0, version 0, DO, RDLENGTH 0.
    query.insert(query.end(), {0, 0, kTypeOpt, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0});
  }
  response = responder.Respond(query, absl::MakeSpan(out), {});
  if (response.kind != Response::Kind::kAnswer || (out[2] & (kFlagTc >> 8)) != 0) return false;
  size_t size = response.size;
  if (dnssec_ok) {
    const uint8_t* opt = out.data() + size - kBareOptBytes;
    if (size < kHeaderBytes + kBareOptBytes || opt[0] != 0 || ReadU16(opt + 1) != kTypeOpt ||
        ReadU16(opt + 9) != 0) {
      return false;  // an OPT with options (an EDE): leave it to the normal path
    }
    size -= kBareOptBytes;
    WriteU16(out.data() + 10, static_cast<uint16_t>(ReadU16(out.data() + 10) - 1));
  }
  answer.assign(reinterpret_cast<const char*>(out.data()), size);
  return true;
}

// What one string costs on the heap beyond its object: glibc malloc rounds a request plus its
// 8-byte header up to 16 bytes; short strings live inside the object (SSO).
size_t HeapBytes(const std::string& s) {
  if (s.capacity() <= 15) return 0;
  return (s.capacity() + 1 + 8 + 15) & ~size_t{15};
}

}  // namespace

std::shared_ptr<const PrecompiledAnswers> PrecompiledAnswers::Build(
    std::shared_ptr<const ZoneSnapshot> snapshot, const ResponderConfig& config, size_t max_bytes) {
  auto answers = std::make_shared<PrecompiledAnswers>();
  DnsResponder responder(snapshot, config, nullptr);
  std::vector<uint8_t> query;
  std::vector<uint8_t> out(kMaxMessageBytes);
  std::vector<uint16_t> types;
  // A CNAME may lead into a signed zone, so any signed zone means DO answers can differ.
  bool any_signed = false;
  for (const auto& zone : snapshot->zones()) any_signed |= zone->secure();
  Entry entry;
  Response response;
  for (const auto& zone : snapshot->zones()) {
    for (const auto& [name, node] : zone->nodes()) {
      types = {kTypeA, kTypeAaaa};
      for (const RRset* rrset : node.rrsets) {
        if (rrset->type != kTypeA && rrset->type != kTypeAaaa) types.push_back(rrset->type);
      }
      for (const uint16_t type : types) {
        std::string key(name);
        key.push_back(static_cast<char>(type >> 8));
        key.push_back(static_cast<char>(type));
        if (answers->answers_.contains(key)) continue;  // a cut seen from parent and child
        if (!Render(responder, name, type, false, query, out, entry.plain, response)) continue;
        entry.rcode = response.rcode;
        entry.kind = response.answer_kind;
        entry.wildcard = response.wildcard;
        entry.dnssec.clear();
        if (any_signed) {
          if (!Render(responder, name, type, true, query, out, entry.dnssec, response)) continue;
          if (entry.dnssec == entry.plain) entry.dnssec.clear();
        }
        // Resident bytes, not payload: the slot (at the table's 7/8 maximum load) and the heap
        // blocks of the key and answers, so the budget is what `ps` will show.
        entry.plain.shrink_to_fit();
        entry.dnssec.shrink_to_fit();
        key.shrink_to_fit();
        const size_t bytes = sizeof(std::pair<const std::string, Entry>) * 8 / 7 + 1 +
                             HeapBytes(key) + HeapBytes(entry.plain) + HeapBytes(entry.dnssec);
        if (answers->bytes_ + bytes > max_bytes) {
          answers->complete_ = false;
          return answers;
        }
        answers->bytes_ += bytes;
        answers->answers_.emplace(std::move(key), std::move(entry));
      }
    }
  }
  return answers;
}

}  // namespace onepass::dns
