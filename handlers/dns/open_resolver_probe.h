// The DNS frontend's start-up question to its backends (HandlerFactory::StartupProbes): does
// one recurse? Then the frontend, serving every client, is an open resolver: anyone who can
// reach it gets recursion (amplification, cache snooping). dnsdist admits only private ranges
// by default for that reason; onepassd serves everyone unless --allow-from says otherwise, so
// it warns instead, at start-up and in --check, and only when no --allow-from is given.
//
// The question is ". NS IN" with RD=1, asked once per backend from the frontend's host, the
// address every forwarded query comes from: a resolver that recurses for us recurses for our
// clients. Its answer sets RA=1 (RFC 1035 §4.1.1: "recursion available"); an authoritative
// server's clears it. A REFUSED answer is no recursion for us, whatever its RA.
#ifndef ONEPASS_HANDLERS_DNS_OPEN_RESOLVER_PROBE_H_
#define ONEPASS_HANDLERS_DNS_OPEN_RESOLVER_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/socket_address.h"
#include "handlers/forwarding.h"

namespace onepass::dns {

// The probe query: ". NS IN", RD=1, ID `id`, no EDNS.
std::vector<uint8_t> OpenResolverQuery(uint16_t id);

// The warning for `reply` from `backend` (its ADDR:PORT, for the text) to `query`
// (OpenResolverQuery): set when the reply answers that query (QR, same ID, the same one
// question: an off-path datagram would have to guess the ID) with RA=1 and any RCODE but
// REFUSED; nothing for anything else (RA=0, another ID or question, a malformed datagram).
std::optional<std::string> JudgeOpenResolverReply(absl::Span<const uint8_t> query,
                                                  absl::Span<const uint8_t> reply,
                                                  absl::string_view backend);

// One probe per distinct backend of `backends` (vacant slots, length 0, skipped), each with an
// ID drawn at random (common/secure_random.h) and JudgeOpenResolverReply as its judge.
std::vector<StartupProbe> OpenResolverProbes(const std::vector<SocketAddress>& backends);

}  // namespace onepass::dns

#endif  // ONEPASS_HANDLERS_DNS_OPEN_RESOLVER_PROBE_H_
