#include "handlers/dns/open_resolver_probe.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/secure_random.h"
#include "handlers/dns/dns_wire.h"

namespace onepass::dns {
namespace {

// The root name, NS, IN: the question of OpenResolverQuery. The root has no letters, so the
// echoed question must match byte for byte (no RFC 4343 case folding to allow for).
constexpr uint8_t kQuestion[] = {0, 0, kTypeNs, 0, kClassIn};

}  // namespace

std::vector<uint8_t> OpenResolverQuery(uint16_t id) {
  std::vector<uint8_t> query(kHeaderBytes + sizeof(kQuestion), 0);
  WriteU16(query.data(), id);
  WriteU16(query.data() + 2, kFlagRd);  // ask for recursion: would it recurse for a client?
  WriteU16(query.data() + 4, 1);        // QDCOUNT
  std::copy(std::begin(kQuestion), std::end(kQuestion), query.begin() + kHeaderBytes);
  return query;
}

std::optional<std::string> JudgeOpenResolverReply(absl::Span<const uint8_t> query,
                                                  absl::Span<const uint8_t> reply,
                                                  absl::string_view backend) {
  if (query.size() < kHeaderBytes || reply.size() < kHeaderBytes) return std::nullopt;
  const uint16_t flags = ReadU16(reply.data() + 2);
  // RFC 5452 §9.1: the ID and the question, or it is not the answer to our query.
  if (!(flags & kFlagQr) || ReadU16(reply.data()) != ReadU16(query.data()) ||
      ReadU16(reply.data() + 4) != 1 || reply.size() < query.size() ||
      !std::equal(query.begin() + kHeaderBytes, query.end(), reply.begin() + kHeaderBytes)) {
    return std::nullopt;
  }
  if (!(flags & kFlagRa) || (flags & kRcodeMask) == kRcodeRefused) return std::nullopt;
  return absl::StrCat(
      "DNS backend ", backend,
      " offers recursion (RA=1 in its answer to '. NS') and no --allow-from is given: this "
      "frontend is an open resolver for anyone who can reach it; give --allow-from with the "
      "resolver's clients (e.g. --allow-from 192.0.2.0/24,2001:db8::/32)");
}

std::vector<StartupProbe> OpenResolverProbes(const std::vector<SocketAddress>& backends) {
  SecureRandom random;
  std::vector<StartupProbe> probes;
  for (const SocketAddress& backend : backends) {
    if (backend.length == 0) continue;  // a vacant slot (--dns-backends-file)
    const bool asked = std::any_of(probes.begin(), probes.end(), [&](const StartupProbe& probe) {
      return SameAddress(probe.upstream, backend);
    });
    if (asked) continue;
    std::vector<uint8_t> query = OpenResolverQuery(static_cast<uint16_t>(random.Next32()));
    const std::string name = backend.ToString();
    probes.push_back({.upstream = backend,
                      .request = query,
                      .judge = [query, name](absl::Span<const uint8_t> reply) {
                        return JudgeOpenResolverReply(query, reply, name);
                      }});
  }
  return probes;
}

}  // namespace onepass::dns
