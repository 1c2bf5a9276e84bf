#include "tests/fuzz/server/tls13/tls13_fuzz_support.h"

#include <openssl/err.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "server/tls/tls13/crypto/key_schedule.h"

namespace onepass::tls::tls13::fuzz {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "tls13 fuzz setup: %s\n", what);
    std::abort();
  }
}

int client_ex_index = -1;

void KeyLog(const SSL* ssl, const char* line) {
  auto* client = static_cast<FuzzClient*>(SSL_get_ex_data(ssl, client_ex_index));
  if (client != nullptr) client->OnKeyLogLine(line);
}

SSL_CTX* ClientContext() {
  static SSL_CTX* ctx = [] {
    SSL_CTX* made = SSL_CTX_new(TLS_client_method());
    Check(made != nullptr, "client SSL_CTX");
    client_ex_index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    SSL_CTX_set_verify(made, SSL_VERIFY_NONE, nullptr);
    SSL_CTX_set_keylog_callback(made, KeyLog);
    SSL_CTX_set_session_cache_mode(made, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    return made;
  }();
  return ctx;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

const onepass::tls::testing::Tls13TestContext& Fixture() {
  static const onepass::tls::testing::Tls13TestContext* fixture = [] {
    std::string why;
    std::unique_ptr<onepass::tls::testing::Tls13TestContext> made =
        onepass::tls::testing::Tls13TestContext::Create(&why);
    if (made == nullptr) why.insert(0, "context: ");
    Check(made != nullptr, why.c_str());
    return made.release();
  }();
  return *fixture;
}

FuzzClient::FuzzClient(const ClientConfig& config) {
  ssl_ = SSL_new(ClientContext());
  Check(ssl_ != nullptr, "client SSL");
  SSL_set_ex_data(ssl_, client_ex_index, this);
  SSL_set_min_proto_version(ssl_, config.min_version);
  SSL_set_max_proto_version(ssl_, TLS1_3_VERSION);
  if (config.groups != nullptr) Check(SSL_set1_groups_list(ssl_, config.groups) == 1, "groups");
  if (config.suites != nullptr) Check(SSL_set_ciphersuites(ssl_, config.suites) == 1, "suites");
  if (!config.alpn.empty()) {
    std::string wire(1, static_cast<char>(config.alpn.size()));
    wire += config.alpn;
    SSL_set_alpn_protos(ssl_, reinterpret_cast<const unsigned char*>(wire.data()),
                        static_cast<unsigned>(wire.size()));
  }
  if (config.session != nullptr) SSL_set_session(ssl_, config.session);
  SSL_set_tlsext_host_name(ssl_, "dot.example.test");
  in_ = BIO_new(BIO_s_mem());
  out_ = BIO_new(BIO_s_mem());
  BIO_set_mem_eof_return(in_, -1);  // empty means "wait"
  SSL_set_bio(ssl_, in_, out_);
  SSL_set_connect_state(ssl_);
}

FuzzClient::~FuzzClient() {
  // Freed without a shutdown, OpenSSL marks the session not resumable (ssl_clear_bad_session),
  // even one a caller took to resume later.
  SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(ssl_);
  ERR_clear_error();
}

bool FuzzClient::Step() {
  const bool done = SSL_do_handshake(ssl_) == 1;
  ERR_clear_error();
  return done;
}

std::string FuzzClient::TakeOutput() {
  char* data = nullptr;
  const long size = BIO_get_mem_data(out_, &data);
  std::string bytes(data, size > 0 ? static_cast<size_t>(size) : 0);
  (void)BIO_reset(out_);
  return bytes;
}

void FuzzClient::GiveInput(absl::Span<const uint8_t> bytes) {
  if (!bytes.empty()) BIO_write(in_, bytes.data(), static_cast<int>(bytes.size()));
}

void FuzzClient::Write(const std::string& plaintext) {
  size_t written = 0;
  SSL_write_ex(ssl_, plaintext.data(), plaintext.size(), &written);
  ERR_clear_error();
}

SSL_SESSION* FuzzClient::TakeSession() {
  char buffer[256];
  size_t got = 0;
  while (SSL_read_ex(ssl_, buffer, sizeof(buffer), &got) == 1) {
  }
  ERR_clear_error();
  return SSL_get1_session(ssl_);
}

void FuzzClient::OnKeyLogLine(const char* line) {
  // "LABEL <client_random hex> <secret hex>"
  const char* label_end = std::strchr(line, ' ');
  if (label_end == nullptr) return;
  const std::string label(line, label_end);
  const char* secret_hex = std::strchr(label_end + 1, ' ');
  if (secret_hex == nullptr) return;
  std::vector<uint8_t> secret;
  for (const char* p = secret_hex + 1; p[0] != '\0' && p[1] != '\0'; p += 2) {
    const int hi = HexValue(p[0]), lo = HexValue(p[1]);
    if (hi < 0 || lo < 0) break;
    secret.push_back(static_cast<uint8_t>(hi << 4 | lo));
  }
  if (label == "CLIENT_HANDSHAKE_TRAFFIC_SECRET") handshake_secret_ = secret;
  if (label == "CLIENT_TRAFFIC_SECRET_0") application_secret_ = secret;
}

bool ClientSealer::Init(CipherSuite suite, absl::Span<const uint8_t> secret) {
  ready_ = false;
  if (secret.empty()) return false;
  suite_ = suite;
  secret_.assign(secret.begin(), secret.end());
  return Rekey();
}

bool ClientSealer::Rekey() {
  const SuiteAlgorithms& algorithms = Fixture().algorithms();
  KeySchedule schedule(algorithms);
  uint8_t key[kMaxKeyLength];
  uint8_t iv[kIvLength];
  const size_t key_length = KeyLength(suite_);
  ready_ = schedule.Start(suite_) &&
           schedule.TrafficKeys(secret_, {key, key_length}, {iv, kIvLength}) &&
           protection_.Init(algorithms, suite_, RecordProtection::Direction::kSeal,
                            {key, key_length}, {iv, kIvLength});
  return ready_;
}

bool ClientSealer::NextSecret() {
  if (!ready_) return false;
  KeySchedule schedule(Fixture().algorithms());
  std::vector<uint8_t> next(secret_.size());
  if (!schedule.Start(suite_) || !schedule.NextTrafficSecret(secret_, absl::MakeSpan(next))) {
    return ready_ = false;
  }
  secret_ = next;
  return Rekey();
}

bool ClientSealer::Seal(uint8_t content_type, absl::Span<const uint8_t> plaintext, size_t padding,
                        std::vector<uint8_t>& out) {
  return ready_ && protection_.Seal(content_type, plaintext, padding, out);
}

bool SplitRecords(absl::Span<const uint8_t> bytes,
                  std::vector<absl::Span<const uint8_t>>* records) {
  records->clear();
  while (!bytes.empty()) {
    if (bytes.size() < kRecordHeaderLength) return false;
    const size_t length = kRecordHeaderLength + (size_t{bytes[3]} << 8 | bytes[4]);
    if (bytes.size() < length) return false;
    records->push_back(bytes.subspan(0, length));
    bytes.remove_prefix(length);
  }
  return true;
}

FirstAnswer ClassifyFirstRecord(absl::Span<const uint8_t> bytes, uint8_t* alert) {
  // §4.1.3: a HelloRetryRequest is a ServerHello with this random.
  static constexpr uint8_t kRetryRandom[32] = {0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11,
                                               0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
                                               0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E,
                                               0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C};
  if (bytes.empty()) return FirstAnswer::kNothing;
  if (bytes.size() >= 7 && bytes[0] == 21 && bytes[3] == 0 && bytes[4] == 2) {
    *alert = bytes[6];
    return FirstAnswer::kAlert;
  }
  // 16 03 03 len | 02 len24 | legacy_version(2) random(32)
  if (bytes.size() >= 5 + 4 + 2 + 32 && bytes[0] == 22 && bytes[5] == 2) {
    return std::memcmp(bytes.data() + 11, kRetryRandom, 32) == 0 ? FirstAnswer::kHelloRetryRequest
                                                                 : FirstAnswer::kServerHello;
  }
  return FirstAnswer::kOther;
}

const char* AnswerName(FirstAnswer answer) {
  switch (answer) {
    case FirstAnswer::kNothing:
      return "nothing";
    case FirstAnswer::kServerHello:
      return "ServerHello";
    case FirstAnswer::kHelloRetryRequest:
      return "HelloRetryRequest";
    case FirstAnswer::kAlert:
      return "alert";
    case FirstAnswer::kOther:
      break;
  }
  return "other";
}

std::string AlertName(uint8_t description) {
  switch (description) {
    case 0:
      return "close_notify";
    case 10:
      return "unexpected_message";
    case 20:
      return "bad_record_mac";
    case 22:
      return "record_overflow";
    case 40:
      return "handshake_failure";
    case 42:
      return "bad_certificate";
    case 47:
      return "illegal_parameter";
    case 50:
      return "decode_error";
    case 51:
      return "decrypt_error";
    case 70:
      return "protocol_version";
    case 71:
      return "insufficient_security";
    case 80:
      return "internal_error";
    case 86:
      return "inappropriate_fallback";
    case 109:
      return "missing_extension";
    case 110:
      return "unsupported_extension";
    case 112:
      return "unrecognized_name";
    case 115:
      return "unknown_psk_identity";
    case 120:
      return "no_application_protocol";
    default:
      break;
  }
  return "alert_" + std::to_string(description);
}

std::string Hex(absl::Span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  text.reserve(2 * bytes.size());
  for (uint8_t b : bytes) {
    text.push_back(kDigits[b >> 4]);
    text.push_back(kDigits[b & 15]);
  }
  return text;
}

}  // namespace onepass::tls::tls13::fuzz
