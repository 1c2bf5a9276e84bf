// Fuzz target (issue 39): any bytes through the TLS 1.3 HandshakeReader, the first byte choosing
// the fragment size; the oracle is split invariance (same messages as the whole input).
// Every complete client_hello is then read by ParseClientHello, whose views must lie inside the
// message and whose binders offset must point at the binders' length, and decided on by
// handshake/choose.h (ChooseForFirstHello, and ChooseForSecondHello for the suite and group it
// chose), whose contracts are the oracle: a first hello is never refused and a fallback says
// why; a second one is never handed over; a served hello names one of its own key shares on a
// group of ours and an ALPN inside the message.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <utility>
#include <vector>

#include "server/tls/tls13/handshake/choose.h"
#include "server/tls/tls13/handshake/server_policy.h"
#include "server/tls/tls13/wire/client_hello.h"
#include "server/tls/tls13/wire/handshake_reader.h"

namespace {

using onepass::tls::tls13::Choice;
using onepass::tls::tls13::ClientHello;

void CheckInside(std::span<const uint8_t> body, absl::Span<const uint8_t> view) {
  if (view.empty()) return;
  if (view.data() < body.data() || view.data() + view.size() > body.data() + body.size()) {
    std::abort();
  }
}

const onepass::tls::tls13::ServerPolicy& Policy() {
  static const onepass::tls::tls13::ServerPolicy policy = [] {
    auto made = onepass::tls::tls13::MakeServerPolicy(
        "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256", {"dot"},
        /*tickets_per_handshake=*/1, /*allow_tls12=*/false);
    if (!made.ok()) std::abort();
    return *made;
  }();
  return policy;
}

void CheckServed(const Choice& choice, const ClientHello& hello, std::span<const uint8_t> all) {
  if (choice.key_share_index >= hello.key_share_count ||
      hello.key_shares[choice.key_share_index].group != choice.group) {
    std::abort();
  }
  if (choice.group != onepass::tls::tls13::kGroupX25519 &&
      choice.group != onepass::tls::tls13::kGroupSecp256r1) {
    std::abort();
  }
  if (choice.suite < 0x1301 || choice.suite > 0x1303) std::abort();
  CheckInside(all, choice.alpn);
}

void CheckChoices(const ClientHello& hello, std::span<const uint8_t> all) {
  const Choice first = onepass::tls::tls13::ChooseForFirstHello(hello, Policy());
  switch (first.action) {
    case Choice::Action::kRefuse:
      std::abort();
    case Choice::Action::kFallback:
      if (first.fallback == onepass::tls::tls13::Fallback::kNone) std::abort();
      return;
    case Choice::Action::kServe:
      CheckServed(first, hello, all);
      break;
    case Choice::Action::kRetry:
      if (first.group != onepass::tls::tls13::kGroupX25519 &&
          first.group != onepass::tls::tls13::kGroupSecp256r1) {
        std::abort();
      }
      break;
  }
  const Choice second =
      onepass::tls::tls13::ChooseForSecondHello(hello, Policy(), first.suite, first.group);
  if (second.action == Choice::Action::kServe) {
    CheckServed(second, hello, all);
  } else if (second.action != Choice::Action::kRefuse) {
    std::abort();
  }
}

void ReadClientHello(std::span<const uint8_t> body) {
  ClientHello hello;
  const absl::Span<const uint8_t> bytes(body.data(), body.size());
  if (!onepass::tls::tls13::ParseClientHello(bytes, &hello).ok) return;
  const std::span<const uint8_t> all = body;
  CheckInside(all, hello.random);
  CheckInside(all, hello.legacy_session_id);
  CheckInside(all, hello.cipher_suites.bytes);
  CheckInside(all, hello.server_name);
  CheckInside(all, hello.alpn_list);
  for (size_t i = 0; i < hello.key_share_count; ++i) {
    CheckInside(all, hello.key_shares[i].key_exchange);
  }
  for (size_t i = 0; i < hello.psk_identity_count; ++i) {
    CheckInside(all, hello.psk_identities[i].identity);
  }
  if (hello.has_pre_shared_key) {
    CheckInside(all, hello.binders);
    // The binders' 2-byte length starts at binders_offset and the list runs to the end.
    if (hello.binders_offset + 2 + hello.binders.size() != body.size()) std::abort();
  }
  CheckChoices(hello, all);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = size_t{data[0]} + 1;
  const std::span<const uint8_t> input(data + 1, size - 1);
  onepass::tls::tls13::HandshakeReader whole_reader(4096), split_reader(4096);
  std::vector<onepass::tls::tls13::HandshakeMessage> whole, messages;
  const bool whole_ok =
      whole_reader.Feed(input, whole) == onepass::tls::tls13::HandshakeReader::Result::kOk;
  // A message is a view until the reader's next Feed: the split ones are kept as copies.
  std::vector<std::pair<uint8_t, std::vector<uint8_t>>> split;
  bool split_ok = true;
  for (size_t pos = 0; pos < input.size() && split_ok; pos += step) {
    const size_t n = std::min(step, input.size() - pos);
    messages.clear();
    split_ok = split_reader.Feed(input.subspan(pos, n), messages) ==
               onepass::tls::tls13::HandshakeReader::Result::kOk;
    for (const auto& m : messages)
      split.emplace_back(m.type, std::vector(m.body.begin(), m.body.end()));
  }
  if (whole_ok != split_ok) std::abort();
  if (whole_ok && split.size() != whole.size()) std::abort();
  for (size_t i = 0; whole_ok && i < whole.size(); ++i) {
    if (whole[i].type != split[i].first ||
        !std::equal(whole[i].body.begin(), whole[i].body.end(), split[i].second.begin(),
                    split[i].second.end())) {
      std::abort();
    }
  }
  for (const onepass::tls::tls13::HandshakeMessage& message : whole) {
    if (message.type == 1) ReadClientHello(message.body);
  }
  return 0;
}
