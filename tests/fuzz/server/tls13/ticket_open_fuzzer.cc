// Fuzz target (issue 39): TicketSealer::Open on any bytes, under a fixed two-key ring and a fixed
// clock (so the seeds, sealed at that time, stay live). Oracles: Open never crashes; what it
// accepts obeys the state's rules (session_ticket.h: lengths, a lifetime of at most 7 days,
// live at the clock) and re-seals to a ticket that opens to the same state. The
// same bytes also read as a TicketState: when Seal takes it, the ticket opens at its issue time
// and no longer opens with one bit flipped.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "absl/types/span.h"
#include "server/tls/ticket_keys.h"
#include "server/tls/tls13/ticket/session_ticket.h"
#include "tests/unit/server/tls/tls13/ticket/test_keys.h"

namespace {

using onepass::tls::TicketKey;
using onepass::tls::tls13::CipherSuite;
using onepass::tls::tls13::HashLength;
using onepass::tls::tls13::kMaxIssueSkewMs;
using onepass::tls::tls13::kMaxTicketLength;
using onepass::tls::tls13::kMaxTicketLifetimeSeconds;
using onepass::tls::tls13::kTicketLength;
using onepass::tls::tls13::TicketKeyring;
using onepass::tls::tls13::TicketSealer;
using onepass::tls::tls13::TicketState;

// Keys 0x51 (newest) and 0x61 (MakeKey: name 16 × seed, hmac_key 32 × (seed+1), aes_key
// 32 × (seed+2)); the seeds' clock is kNowMs, 2026-12-03 06:00 UTC.
using onepass::tls::tls13::testing::kNowMs;
using onepass::tls::tls13::testing::MakeKey;
using onepass::tls::tls13::testing::SameState;

TicketSealer& Sealer() {
  static const TicketKey keys[] = {MakeKey(0x51), MakeKey(0x61)};
  static const std::unique_ptr<TicketKeyring> ring = TicketKeyring::Create(keys);
  if (ring == nullptr) std::abort();
  static TicketSealer sealer(*ring);
  return sealer;
}

// An accepted ticket keeps session_ticket.h's promises: a PSK of the suite's hash length, an
// ALPN that fits, a lifetime of at most 7 days (kMaxTicketLifetimeSeconds), and live at `now`:
// issued at most kMaxIssueSkewMs ahead of it and no longer ago than its lifetime. It is live
// exactly that long (it opens at its issue time and at the end of its lifetime, not a
// millisecond later, nor more than kMaxIssueSkewMs before its issue time: the fuzzer's own
// clock alone never reaches these edges, for no fuzzed ticket passes the tag). Then it
// re-seals to a ticket that opens to the same state.
void CheckReseals(absl::Span<const uint8_t> ticket, const TicketState& state, uint64_t now) {
  if (state.psk_length != HashLength(state.suite) || state.alpn_length > sizeof(state.alpn)) {
    std::abort();
  }
  if (state.lifetime_seconds > kMaxTicketLifetimeSeconds) std::abort();
  const uint64_t issued = state.issued_unix_ms;
  const uint64_t lifetime_ms = uint64_t{state.lifetime_seconds} * 1000;
  const bool plausible =
      issued > now ? issued - now <= kMaxIssueSkewMs : now - issued <= lifetime_ms;
  if (!plausible) std::abort();
  TicketState at;
  // issued <= now + kMaxIssueSkewMs: none of these sums overflows.
  if (!Sealer().Open(ticket, issued, &at) || !Sealer().Open(ticket, issued + lifetime_ms, &at) ||
      Sealer().Open(ticket, issued + lifetime_ms + 1, &at)) {
    std::abort();
  }
  if (issued > kMaxIssueSkewMs && (!Sealer().Open(ticket, issued - kMaxIssueSkewMs, &at) ||
                                   Sealer().Open(ticket, issued - kMaxIssueSkewMs - 1, &at))) {
    std::abort();
  }
  uint8_t again[kMaxTicketLength];
  if (Sealer().Seal(state, again) != kTicketLength) std::abort();
  TicketState reopened;
  if (!Sealer().Open({again, kTicketLength}, now, &reopened) || !SameState(reopened, state)) {
    std::abort();
  }
}

uint64_t Read(const uint8_t* data, size_t size, size_t* at, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; ++i, ++*at) v = v << 8 | (*at < size ? data[*at] : 0);
  return v;
}

// The bytes as a state: suite, issue time, lifetime, age_add, ALPN length and bytes, PSK.
void SealRoundTrip(const uint8_t* data, size_t size) {
  size_t at = 0;
  TicketState s;
  s.suite = static_cast<CipherSuite>(0x1301 + Read(data, size, &at, 1) % 3);
  s.issued_unix_ms = Read(data, size, &at, 8);
  s.lifetime_seconds = static_cast<uint32_t>(Read(data, size, &at, 4) % 700000);  // some > 7 days
  s.age_add = static_cast<uint32_t>(Read(data, size, &at, 4));
  s.alpn_length = static_cast<uint8_t>(Read(data, size, &at, 1) % 34);  // 33: one too many
  for (size_t i = 0; i < s.alpn_length && i < sizeof(s.alpn); ++i) {
    s.alpn[i] = static_cast<uint8_t>(Read(data, size, &at, 1));
  }
  s.psk_length = static_cast<uint8_t>(HashLength(s.suite));
  for (size_t i = 0; i < s.psk_length; ++i)
    s.psk[i] = static_cast<uint8_t>(Read(data, size, &at, 1));
  const size_t flip = Read(data, size, &at, 2) % (kTicketLength * 8);

  uint8_t ticket[kMaxTicketLength];
  const size_t n = Sealer().Seal(s, ticket);
  const bool sound =
      s.alpn_length <= sizeof(s.alpn) && s.lifetime_seconds <= kMaxTicketLifetimeSeconds;
  if (n != (sound ? kTicketLength : 0)) std::abort();
  if (n == 0) return;
  TicketState opened;
  if (!Sealer().Open({ticket, n}, s.issued_unix_ms, &opened) || !SameState(opened, s)) std::abort();
  ticket[flip / 8] ^= static_cast<uint8_t>(1u << (flip % 8));
  if (Sealer().Open({ticket, n}, s.issued_unix_ms, &opened)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TicketState state;
  if (Sealer().Open({data, size}, kNowMs, &state)) CheckReseals({data, size}, state, kNowMs);
  SealRoundTrip(data, size);
  return 0;
}
