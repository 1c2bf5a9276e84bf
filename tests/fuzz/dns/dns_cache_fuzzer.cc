// Fuzz target: a backend's answer, any bytes after the question it must echo (the handler
// checks that before caching), kept by the frontend's cache with serve-stale on, then served
// fresh and stale. The stale path patches the bytes (TTL 30, an EDE option appended to a last
// OPT record, RFC 8914), so it must stay inside them: a served answer is the stored one with
// the client's ID, or (stale) that plus the 6 bytes of EDE "Stale Answer"; served twice, the
// same bytes (nothing stored is changed by serving).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "handlers/dns/dns_cache.h"
#include "handlers/dns/dns_wire.h"

namespace {

using onepass::OutputBuffer;
using onepass::dns::DnsCache;

// www.example.com A with an OPT (UDP 1232, no options): an EDNS query, as the key.
std::vector<uint8_t> Query() {
  std::vector<uint8_t> query = {0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1};
  for (const char* label : {"www", "example", "com"}) {
    query.push_back(static_cast<uint8_t>(std::strlen(label)));
    query.insert(query.end(), label, label + std::strlen(label));
  }
  query.insert(query.end(), {0, 0, 1, 0, 1});
  query.insert(query.end(), {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0});
  return query;
}
constexpr size_t kQnameBytes = 17;
constexpr size_t kQuestionBytes = kQnameBytes + 4;

std::vector<uint8_t> Served(const OutputBuffer& out) {
  if (out.size() < 2 || onepass::dns::ReadU16(out.data()) != out.size() - 2) std::abort();
  return std::vector<uint8_t>(out.data() + 2, out.data() + out.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < onepass::dns::kHeaderBytes || size > 8192) return 0;
  static const std::vector<uint8_t> query = Query();
  std::string key;
  if (!DnsCache::MakeKey(query, kQnameBytes, key)) std::abort();
  // The input's header with QDCOUNT 1, the query's question, then the rest of the input.
  std::vector<uint8_t> response(data, data + onepass::dns::kHeaderBytes);
  onepass::dns::WriteU16(response.data() + 4, 1);
  response.insert(response.end(), query.begin() + onepass::dns::kHeaderBytes,
                  query.begin() + onepass::dns::kHeaderBytes + kQuestionBytes);
  response.insert(response.end(), data + onepass::dns::kHeaderBytes, data + size);

  DnsCache cache({.entries = 4,
                  .max_ttl = 600,
                  .max_negative_ttl = 600,
                  .max_answer_bytes = 65535,
                  .serve_stale_seconds = 86400});
  const absl::Time stored = absl::FromUnixSeconds(1'000'000);
  cache.Insert(key, response, stored);
  OutputBuffer out(2 + 65535);
  if (cache.Answer(key, query, kQnameBytes, stored, out)) {
    const std::vector<uint8_t> fresh = Served(out);
    if (fresh.size() != response.size() ||
        std::memcmp(fresh.data() + 2, response.data() + 2, onepass::dns::kHeaderBytes - 2) != 0) {
      std::abort();
    }
  }
  const absl::Time expired = stored + absl::Seconds(601);
  out.Clear();
  if (!cache.AnswerStale(key, query, kQnameBytes, expired, out)) return 0;
  const std::vector<uint8_t> stale = Served(out);
  if (onepass::dns::ReadU16(stale.data()) != 0x1234) std::abort();  // the client's ID
  if (stale.size() != response.size()) {
    static constexpr uint8_t kEde[] = {0, 15, 0, 2, 0, 3};
    if (stale.size() != response.size() + sizeof(kEde) ||
        std::memcmp(stale.data() + response.size(), kEde, sizeof(kEde)) != 0) {
      std::abort();
    }
  }
  out.Clear();
  if (!cache.AnswerStale(key, query, kQnameBytes, expired, out) || Served(out) != stale) {
    std::abort();
  }
  return 0;
}
