// Fuzz target: a server TlsSession (server/tls/tls_session.h) fed any bytes, in chunks the
// input chooses, with the session reused from one input to the next as a worker's slot is
// (SSL_clear). Half the inputs come after a real ClientHello (OpenSSL's client, made once), so
// the bytes also reach the encrypted half of the handshake. Checks the contract whatever the
// bytes: no crash, leak or hang; consumed and plaintext within what was given; a failure is
// final and has a reason; pending output within TlsConfig::max_output_bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "server/tls/tls_server_context.h"
#include "server/tls/tls_session.h"
#include "tests/unit/server/tls/tls_test_client.h"
#include "tests/unit/server/tls/tls_test_pki.h"

namespace {

using onepass::tls::FeedResult;
using onepass::tls::TlsResult;

struct Fixture {
  Fixture() {
    onepass::tls::TlsConfig config;
    config.cert_file = pki.chain_file();
    config.key_file = pki.key_file();
    config.allow_tls12 = true;  // reach the 1.2 state machine too
    auto made = onepass::tls::TlsServerContext::Create(config, absl::Now());
    if (!made.ok()) std::abort();
    context = *made;
    onepass::tls::testing::TestTlsClient client;
    client.Step();
    hello = client.TakeOutput();
  }
  onepass::tls::testing::TestPkiDir pki;
  std::shared_ptr<const onepass::tls::TlsServerContext> context;
  std::string hello;
  onepass::tls::TlsSession session;
  onepass::tls::TlsStats stats;
};

void Check(bool ok) {
  if (!ok) std::abort();
}

// Feeds `bytes` and checks the result against the contract.
bool FeedChecked(Fixture& f, absl::Span<const uint8_t> bytes) {
  uint8_t room[700];
  const bool failed_before = f.session.failed();
  const FeedResult r = f.session.Feed(bytes, room);
  Check(r.consumed <= bytes.size() && r.plaintext <= sizeof(room));
  Check(f.session.Pending().size() <= f.context->config().max_output_bytes);
  Check((r.result == TlsResult::kFailed) == f.session.failed());
  Check(!failed_before || r.result == TlsResult::kFailed);
  if (f.session.failed()) Check(f.session.failure() != onepass::tls::TlsFailure::kNone);
  f.session.ConsumePending(f.session.Pending().size());
  if (r.plaintext > 0) {
    Check(f.session.handshake_done());
    f.session.Encrypt({room, r.plaintext}, /*close_notify=*/true);
  }
  return r.result != TlsResult::kFailed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();  // lives for the process, as a worker's slot does
  Fixture& f = *fixture;
  if (size == 0) return 0;
  Check(f.session.Start(f.context, &f.stats));
  // First byte: bit 0 puts a real ClientHello first; the rest is the chunk size (1..128).
  const bool after_hello = data[0] & 1;
  const size_t chunk = (data[0] >> 1) + 1;
  const absl::Span<const uint8_t> input(data + 1, size - 1);
  if (after_hello &&
      !FeedChecked(f, {reinterpret_cast<const uint8_t*>(f.hello.data()), f.hello.size()})) {
    std::abort();  // a real client's ClientHello must be accepted
  }
  for (size_t at = 0; at < input.size(); at += chunk) {
    if (!FeedChecked(f, input.subspan(at, chunk))) break;
  }
  return 0;
}
