// Writes the seeds of tls13_session_fuzzer and tls13_differential_fuzzer: real first flights
// of OpenSSL's client (every suite and group, a HelloRetryRequest's, no ALPN, another ALPN, a
// resumption with a ticket of ours) and session scripts in the fuzzer's op language
// (session_fuzzer.cc). Usage: tls13_fuzz_seeds <tests/fuzz/corpus>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "server/tls/tls13/handshake/server_session.h"
#include "tests/fuzz/server/tls13/tls13_fuzz_support.h"

namespace {

namespace fz = onepass::tls::tls13::fuzz;
using onepass::tls::tls13::ServerSession;

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!file) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

std::string Hello(const fz::ClientConfig& config) {
  fz::FuzzClient client(config);
  client.Step();
  return client.TakeOutput();
}

// A session to resume: a full handshake with our engine, the client reading our ticket.
SSL_SESSION* OurTicket() {
  ServerSession server(fz::Fixture().context());
  server.Begin(nullptr);
  fz::FuzzClient client;
  onepass::tls::testing::Pump(client, server);
  SSL_SESSION* session = client.TakeSession();
  if (session == nullptr || SSL_SESSION_is_resumable(session) != 1) {
    std::fprintf(stderr, "no ticket from our engine\n");
    std::exit(1);
  }
  return session;
}

// One sealed-record op: 01pppttt, length, bytes.
std::string Sealed(int type_index, const std::string& plaintext) {
  return std::string(1, static_cast<char>(0x40 | type_index)) +
         static_cast<char>(plaintext.size()) + plaintext;
}

std::string Prefix(int prefix, int fragment) {  // fragment 1..64
  return std::string(1, static_cast<char>(4 * (fragment - 1) + prefix));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <tests/fuzz/corpus>\n", argv[0]);
    return 2;
  }
  const std::string session_dir = std::string(argv[1]) + "/tls13_session_fuzzer/";
  const std::string diff_dir = std::string(argv[1]) + "/tls13_differential_fuzzer/";

  struct Named {
    const char* name;
    fz::ClientConfig config;
  };
  std::vector<Named> hellos = {
      {"default", {}},
      {"x25519", {"X25519", nullptr}},
      {"p256", {"P-256", nullptr}},
      {"retry_x448_p256", {"X448:P-256", nullptr}},
      {"p384_only", {"P-384", nullptr}},
      {"aes256", {nullptr, "TLS_AES_256_GCM_SHA384"}},
      {"chacha", {nullptr, "TLS_CHACHA20_POLY1305_SHA256"}},
      {"ccm_only", {nullptr, "TLS_AES_128_CCM_SHA256"}},
      {"tls12_too", {}},
      {"no_alpn", {}},
      {"alpn_h2", {}},
  };
  hellos[8].config.min_version = TLS1_2_VERSION;
  hellos[9].config.alpn.clear();
  hellos[10].config.alpn = "h2";
  SSL_SESSION* ticket = OurTicket();
  if (ticket == nullptr) return 1;
  Named resumption{"psk_our_ticket", {}};
  resumption.config.session = ticket;
  hellos.push_back(resumption);
  Named resumption_retry{"psk_our_ticket_retry", {"X448:X25519", nullptr}};
  resumption_retry.config.session = ticket;
  hellos.push_back(resumption_retry);

  for (const Named& named : hellos) {
    const std::string hello = Hello(named.config);
    Write(diff_dir + named.name, hello);
    // The same bytes as the session fuzzer's first flight, whole (64) and in 7-byte pieces.
    Write(session_dir + "raw_" + named.name, Prefix(0, 64) + "\x3f" + hello);
  }
  Write(session_dir + "raw_default_by_7", Prefix(0, 7) + "\x3f" + Hello({}));
  SSL_SESSION_free(ticket);

  const std::string kReal = "\x80";
  const std::string query = Sealed(2, "query");
  const std::string close_notify = Sealed(1, std::string("\x01\x00", 2));
  const std::string answer_and_close = "\xc3";
  // The whole exchange from the first flight: hello, Finished, query, answer, close_notify.
  Write(session_dir + "full_exchange",
        Prefix(0, 64) + kReal + kReal + query + answer_and_close + close_notify);
  Write(session_dir + "full_exchange_by_3",
        Prefix(0, 3) + kReal + kReal + query + answer_and_close + close_notify);
  // After our flight: the real Finished; a forged one (§4.4.4: decrypt_error); a KeyUpdate
  // before the Finished; an alert.
  Write(session_dir + "second_real_finished", Prefix(1, 64) + kReal + query + answer_and_close);
  Write(session_dir + "second_forged_finished",
        Prefix(1, 64) + Sealed(0, std::string("\x14\x00\x00\x20", 4) + std::string(32, '\0')));
  Write(session_dir + "second_key_update",
        Prefix(1, 64) + Sealed(0, std::string("\x18\x00\x00\x01\x00", 5)));
  Write(session_dir + "second_alert", Prefix(1, 64) + Sealed(1, std::string("\x02\x28", 2)));
  Write(session_dir + "second_two_ccs",
        Prefix(1, 64) + std::string("\x06\x14\x03\x03\x00\x01\x01", 7) + kReal);
  // After our HelloRetryRequest: the real second ClientHello and the rest; a first ClientHello
  // again; a change_cipher_spec before the client's own (Appendix D.4 allows one); an alert.
  Write(session_dir + "retry_real_exchange", Prefix(3, 64) + kReal + kReal + query + close_notify);
  Write(session_dir + "retry_first_hello_again",
        Prefix(3, 64) + "\x3f" + Hello({"X448:X25519", nullptr}));
  Write(session_dir + "retry_two_ccs",
        Prefix(3, 64) + std::string("\x06\x14\x03\x03\x00\x01\x01", 7) + kReal);
  Write(session_dir + "retry_alert",
        Prefix(3, 64) + std::string("\x07\x15\x03\x03\x00\x02\x02\x28", 8));
  // Connected: a query, KeyUpdates (requested or not) with the sealer following, a record
  // with padding, an empty application record, an unknown inner type, close_notify.
  Write(session_dir + "app_real_query", Prefix(2, 64) + kReal + answer_and_close);
  Write(session_dir + "app_query_close", Prefix(2, 64) + query + "\xc1" + close_notify);
  Write(session_dir + "app_key_update_requested",
        Prefix(2, 64) + Sealed(0, std::string("\x18\x00\x00\x01\x01", 5)) + "\xc0" + query +
            answer_and_close);
  Write(session_dir + "app_key_update",
        Prefix(2, 5) + Sealed(0, std::string("\x18\x00\x00\x01\x00", 5)) + "\xc0" + query);
  Write(session_dir + "app_padded", Prefix(2, 64) + std::string(1, '\x42' | 0x38) + "\x05query");
  Write(session_dir + "app_empty", Prefix(2, 64) + Sealed(2, "") + query);
  Write(session_dir + "app_unknown_type", Prefix(2, 64) + Sealed(6, "x"));
  Write(session_dir + "app_fatal_alert", Prefix(2, 64) + Sealed(1, std::string("\x02\x28", 2)));
  Write(session_dir + "app_new_session_ticket",
        Prefix(2, 64) + Sealed(0, std::string("\x04\x00\x00\x00", 4)));
  std::printf("seeds written under %s\n", argv[1]);
  return 0;
}
