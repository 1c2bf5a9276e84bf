// Fuzz target (issue 39): the TLS 1.3 engine's ServerSession (record layer and state machine)
// on hostile bytes, after a real handshake prefix that the first byte chooses:
//   0: none, the bytes are the client's first flight;
//   1: after OpenSSL's client's ClientHello and our flight, the bytes are its second flight;
//   2: after a completed handshake, the bytes are application records;
//   3: after a ClientHello that shares only X448 and our HelloRetryRequest, the bytes are the
//      client's second flight (its second ClientHello is the real client's next bytes).
// The rest of the first byte (/4) is the fragment size (1..64) the bytes arrive in. Then ops:
//   00nnnnnn: the next n bytes raw (n = 63: all that is left);
//   01pppttt len bytes: `bytes` sealed as one record of content type kTypes[t] with p*8 bytes
//     of padding, under the client's current keys (the key log's; prefix 1: handshake keys
//     until the session is connected), so the bytes reach past the AEAD;
//   10xxxxxx: the real client's next bytes (its ClientHello, its second ClientHello, its
//     Finished flight, a query);
//   11xxxxx0: the sealer's keys move on (§7.2: after a KeyUpdate it sealed);
//   11xxxxx1: the server writes an answer (close_notify when bit 1 is set).
// Invariants, whatever the bytes: no crash, leak or hang (ASan/UBSan); output() is whole
// records; kFailed <=> error(); a kFailed session's output ends with exactly one alert record
// (§6: 15 03 03 00 02 02 desc = alert_sent() in plaintext before our ServerHello, one sealed
// 23 03 03 00 13 record after), none when the client's own alert ended it; nothing more after
// kFailed or kClosed; kFallback only in the first flight, with nothing sent.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "server/tls/tls13/handshake/server_session.h"
#include "tests/fuzz/server/tls13/tls13_fuzz_support.h"

namespace {

using onepass::tls::tls13::AlertDescription;
using onepass::tls::tls13::CipherSuite;
using onepass::tls::tls13::Fallback;
using onepass::tls::tls13::ServerSession;
using onepass::tls::tls13::SessionError;
namespace fz = onepass::tls::tls13::fuzz;
using Status = ServerSession::Status;

constexpr uint8_t kTypes[8] = {22, 21, 23, 20, 0, 24, 255, 22};

[[noreturn]] void Fail(const char* why) {
  std::fprintf(stderr, "tls13_session_fuzzer: invariant broken: %s\n", why);
  std::abort();
}

void Check(bool ok, const char* why) {
  if (!ok) Fail(why);
}

struct Run {
  explicit Run(ServerSession& s) : server(s) {}
  ServerSession& server;
  fz::FuzzClient* client = nullptr;
  fz::ClientSealer sealer;
  std::string client_next;   // the real client's next bytes (op 10)
  bool first_flight = true;  // nothing of ours sent yet
  bool keys_in_use = false;  // our ServerHello went: alerts are sealed
  bool connected = false;
  bool over = false;  // kFailed, kClosed or kFallback: only the after-checks remain
  Status final_status = Status::kWantRead;
};

// ONEPASS_FUZZ_TRACE=1 prints each step (to read what a reproducer does).
bool Tracing() {
  static const bool tracing = std::getenv("ONEPASS_FUZZ_TRACE") != nullptr;
  return tracing;
}

// Checks one call's output and status, then takes the output.
void CheckStep(Run& run, Status status) {
  ServerSession& server = run.server;
  const absl::Span<const uint8_t> out = server.output();
  if (Tracing()) {
    std::fprintf(stderr, "step: status %d, %zu bytes out, error %d (%s), alert %d, fallback %s\n",
                 static_cast<int>(status), out.size(), static_cast<int>(server.error()),
                 server.error_reason(), static_cast<int>(server.alert_sent()),
                 onepass::tls::tls13::FallbackName(server.fallback()));
  }
  std::vector<absl::Span<const uint8_t>> records;
  Check(fz::SplitRecords(out, &records), "output is not whole records");
  Check((status == Status::kFailed) == (server.error() != SessionError::kNone),
        "kFailed without error() or error() without kFailed");
  if (status == Status::kFallback) {
    Check(run.first_flight && out.empty(), "kFallback after our answer, or with output");
    Check(server.fallback() != Fallback::kNone, "kFallback without a reason");
  }
  // Our ServerHello (not a HelloRetryRequest) in this output: keys from here on.
  bool keys = run.keys_in_use;
  size_t plaintext_alerts = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const absl::Span<const uint8_t> r = records[i];
    if (r[0] == 22) {
      uint8_t unused = 0;
      const fz::FirstAnswer answer = fz::ClassifyFirstRecord(r, &unused);
      Check(!keys, "plaintext handshake record after our ServerHello");
      if (answer == fz::FirstAnswer::kServerHello) keys = true;
    } else if (r[0] == 21) {
      ++plaintext_alerts;
      Check(!keys, "plaintext alert after our ServerHello");
      Check(i + 1 == records.size(), "plaintext alert not last");
    } else if (r[0] == 23) {
      Check(keys, "sealed record before our ServerHello");
    } else if (r[0] != 20) {  // a change_cipher_spec is allowed (middlebox compatibility)
      Fail("record of an unknown type in the output");
    }
  }
  if (status == Status::kFailed) {
    const SessionError error = server.error();
    if (error == SessionError::kPeerAlert || error == SessionError::kPeerClosed) {
      Check(plaintext_alerts == 0, "an alert answered the client's alert");
    } else {
      Check(!records.empty(), "kFailed without an alert");
      const absl::Span<const uint8_t> last = records.back();
      Check(server.alert_sent() != AlertDescription::kCloseNotify, "failure sent close_notify");
      if (!keys) {
        Check(last.size() == 7 && last[0] == 21 && last[1] == 3 && last[2] == 3 && last[5] == 2 &&
                  last[6] == static_cast<uint8_t>(server.alert_sent()),
              "plaintext alert is not 15 03 03 00 02 02 alert_sent()");
      } else {
        // 2 bytes of alert, its content type, the AEAD tag: one record of 19 bytes.
        Check(last.size() == 5 + 19 && last[0] == 23, "sealed alert is not one 19-byte record");
      }
    }
  } else {
    Check(plaintext_alerts == 0, "an alert without kFailed");
  }
  if (!out.empty()) run.first_flight = false;
  run.keys_in_use = keys;
  if (status == Status::kConnected) run.connected = true;
  // The real client reads what we said (its Finished, its key log's secrets).
  if (run.client != nullptr && !out.empty() && status != Status::kFailed) {
    run.client->GiveInput(out);
    run.client->Step();
    const std::string more = run.client->TakeOutput();
    if (!more.empty()) run.client_next = more;
    if (!run.sealer.ready() && keys && !run.client->handshake_secret().empty()) {
      run.sealer.Init(static_cast<CipherSuite>(server.suite()), run.client->handshake_secret());
    }
  }
  server.ClearOutput();
  if (status == Status::kFailed || status == Status::kClosed || status == Status::kFallback) {
    run.over = true;
    run.final_status = status;
  }
}

// The bytes, in fragments; the session driven by Handshake() or, once connected, Read().
void Deliver(Run& run, absl::Span<const uint8_t> bytes, size_t fragment) {
  while (!bytes.empty() && !run.over) {
    const size_t n = std::min(fragment, bytes.size());
    run.server.Receive(bytes.subspan(0, n));
    bytes.remove_prefix(n);
    if (!run.connected) {
      CheckStep(run, run.server.Handshake());
      if (run.over || !run.connected) continue;
      if (run.client != nullptr && !run.client->application_secret().empty()) {
        // The client's keys move on too.
        run.sealer.Init(static_cast<CipherSuite>(run.server.suite()),
                        run.client->application_secret());
      }
    }
    uint8_t room[512];
    for (int reads = 0; reads < 64 && !run.over; ++reads) {
      size_t got = 0;
      const Status status = run.server.Read(room, &got);
      Check(got <= sizeof(room), "Read past its room");
      Check(status != Status::kFallback, "kFallback from Read");
      Check(got == 0 || status == Status::kConnected, "data without kConnected");
      CheckStep(run, status);
      if (got == 0) break;
    }
  }
}

// After kFailed or kClosed: more bytes change nothing and say nothing; after kClosed the
// server may still write.
void CheckOver(Run& run) {
  if (run.final_status == Status::kFallback) return;
  static const uint8_t kMore[] = {23, 3, 3, 0, 1, 0, 22, 3, 3, 0, 1, 1};
  run.server.Receive(kMore);
  Check(run.server.Handshake() == run.final_status, "status changed after the end");
  Check(run.server.output().empty(), "output after the end (Handshake)");
  uint8_t room[64];
  size_t got = 0;
  Check(run.server.Read(room, &got) == run.final_status, "status changed after the end");
  Check(got == 0 && run.server.output().empty(), "output after the end (Read)");
  const uint8_t answer[] = {'x'};
  if (run.final_status == Status::kClosed) {
    // §6.1: the client's close_notify closes its side only; the answer to what came before
    // it still goes out, as one record and the server's close_notify.
    Check(run.server.Write(answer, true) && !run.server.output().empty(),
          "no answer after the client's close_notify");
    run.server.ClearOutput();
    return;
  }
  Check(!run.server.Write(answer, true) && run.server.output().empty(), "Write after the end");
}

// Prefix 1, 2 and 3: a real handshake as far as the prefix goes.
void Prefix(Run& run, fz::FuzzClient& client, int prefix) {
  run.client = &client;
  client.Step();
  const std::string hello = client.TakeOutput();
  run.server.Receive(fz::Bytes(hello));
  const Status status = run.server.Handshake();
  Check(status == Status::kWantRead, "a real ClientHello not served");
  // The client reads our answer: its Finished (or, after a retry, its second ClientHello) is
  // client_next.
  CheckStep(run, status);
  if (prefix == 3) {
    Check(run.server.retried(), "no HelloRetryRequest for an X448 share");
    return;
  }
  const CipherSuite suite = static_cast<CipherSuite>(run.server.suite());
  if (prefix == 1) {
    Check(run.sealer.Init(suite, client.handshake_secret()), "no handshake secret");
    return;
  }
  const std::string finished = run.client_next;
  run.client_next.clear();
  run.server.Receive(fz::Bytes(finished));
  const Status done = run.server.Handshake();
  Check(done == Status::kConnected, "a real client's Finished refused");
  CheckStep(run, done);
  Check(run.sealer.Init(suite, client.application_secret()), "no application secret");
  client.Write("query");
  run.client_next = client.TakeOutput();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ServerSession* session = [] {
    auto* made = new ServerSession(fz::Fixture().context());
    Check(made->ok(), "ServerSession");
    return made;
  }();
  if (size == 0) return 0;
  const int prefix = data[0] % 4;
  const size_t fragment = data[0] / 4 + 1;
  session->Begin(nullptr);
  Run run(*session);
  fz::ClientConfig config;
  if (prefix == 3) config.groups = "X448:X25519";  // OpenSSL shares only its first group
  fz::FuzzClient client(config);
  if (prefix == 0) {
    run.client = &client;
    client.Step();
    run.client_next = client.TakeOutput();
  } else {
    Prefix(run, client, prefix);
  }
  size_t at = 1;
  std::vector<uint8_t> sealed;
  while (at < size && !run.over) {
    const uint8_t op = data[at++];
    switch (op >> 6) {
      case 0: {
        const size_t n = (op & 63) == 63 ? size - at : std::min<size_t>(op & 63, size - at);
        Deliver(run, {data + at, n}, fragment);
        at += n;
        break;
      }
      case 1: {
        if (at >= size) break;
        const size_t length = data[at++];
        const size_t n = std::min(length, size - at);
        sealed.clear();
        if (run.sealer.Seal(kTypes[op & 7], {data + at, n}, static_cast<size_t>((op >> 3) & 7) * 8,
                            sealed)) {
          Deliver(run, sealed, fragment);
        } else if (!run.sealer.ready()) {
          Deliver(run, {data + at, n}, fragment);  // no keys yet: the bytes as they are
        }
        at += n;
        break;
      }
      case 2: {
        const std::string next = run.client_next;
        run.client_next.clear();
        Deliver(run, fz::Bytes(next), fragment);
        break;
      }
      default:
        if ((op & 1) == 0) {
          run.sealer.NextSecret();
        } else if (run.connected && !run.over) {
          const uint8_t answer[] = {'a', 'n', 's', 'w', 'e', 'r'};
          const bool wrote = run.server.Write(answer, (op & 2) != 0);
          Check(wrote, "Write refused on a connected session");
          CheckStep(run, Status::kConnected);
        }
        break;
    }
  }
  if (run.over) CheckOver(run);
  return 0;
}
