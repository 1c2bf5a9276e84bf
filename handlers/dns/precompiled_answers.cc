#include "handlers/dns/precompiled_answers.h"

#include <utility>
#include <vector>

#include "handlers/dns/dns_responder.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {

std::shared_ptr<const PrecompiledAnswers> PrecompiledAnswers::Build(
    std::shared_ptr<const ZoneSnapshot> snapshot, const ResponderConfig& config, size_t max_bytes) {
  auto answers = std::make_shared<PrecompiledAnswers>();
  DnsResponder responder(snapshot, config, nullptr);
  std::vector<uint8_t> query;
  std::vector<uint8_t> out(kMaxMessageBytes);
  std::vector<uint16_t> types;
  for (const auto& zone : snapshot->zones()) {
    for (const auto& [name, node] : zone->nodes()) {
      types = {kTypeA, kTypeAaaa};
      for (const RRset& rrset : node.rrsets) {
        if (rrset.type != kTypeA && rrset.type != kTypeAaaa) types.push_back(rrset.type);
      }
      for (const uint16_t type : types) {
        std::string key = name;
        key.push_back(static_cast<char>(type >> 8));
        key.push_back(static_cast<char>(type));
        if (answers->answers_.contains(key)) continue;  // a cut seen from parent and child
        // ID 0, flags 0, QDCOUNT 1; the canonical name; QTYPE; QCLASS IN.
        query.assign(kHeaderBytes, 0);
        query[5] = 1;
        query.insert(query.end(), name.begin(), name.end());
        query.insert(query.end(), {static_cast<uint8_t>(type >> 8), static_cast<uint8_t>(type), 0,
                                   static_cast<uint8_t>(kClassIn)});
        const Response response = responder.Respond(query, absl::MakeSpan(out), 0);
        // Truncated answers (near 64 KiB) are left to the normal path, which reserves OPT room.
        if (response.kind != Response::Kind::kAnswer || (out[2] & (kFlagTc >> 8)) != 0) continue;
        if (answers->bytes_ + key.size() + response.size > max_bytes) {
          answers->complete_ = false;
          return answers;
        }
        answers->bytes_ += key.size() + response.size;
        answers->answers_.emplace(
            std::move(key), std::string(reinterpret_cast<const char*>(out.data()), response.size));
      }
    }
  }
  return answers;
}

}  // namespace onepass::dns
