#include "server/tls/tls_stats.h"

#include "absl/strings/str_cat.h"

namespace onepass::tls {

absl::string_view TlsFailureName(TlsFailure failure) {
  static constexpr absl::string_view kNames[] = {"none",
#define ONEPASS_TLS_NAME(name, help) #name,
                                                 ONEPASS_TLS_FAILURES(ONEPASS_TLS_NAME)
#undef ONEPASS_TLS_NAME
  };
  const auto index = static_cast<size_t>(failure);
  return index < sizeof(kNames) / sizeof(kNames[0]) ? kNames[index] : "unknown";
}

absl::string_view TlsCipherName(int index) {
  static constexpr absl::string_view kNames[kTlsCipherCount] = {"aes128gcm", "aes256gcm",
                                                                "chacha20", "other"};
  return index >= 0 && index < kTlsCipherCount ? kNames[index] : "other";
}

TlsStatsSnapshot& TlsStatsSnapshot::operator+=(const TlsStatsSnapshot& other) {
  handshakes_full += other.handshakes_full;
  handshakes_resumed += other.handshakes_resumed;
  tls13 += other.tls13;
  tls12 += other.tls12;
  alpn_selected += other.alpn_selected;
  alpn_absent += other.alpn_absent;
  tickets_unknown_key += other.tickets_unknown_key;
  close_notify_received += other.close_notify_received;
  hello_retry_requests += other.hello_retry_requests;
  handshakes_onepass_engine += other.handshakes_onepass_engine;
  for (int i = 0; i < tls13::kFallbackCount; ++i) fallback[i] += other.fallback[i];
  for (int i = 0; i < kTlsCipherCount; ++i) cipher[i] += other.cipher[i];
  for (int i = 0; i < kTlsFailureCount; ++i) failed[i] += other.failed[i];
  return *this;
}

std::string TlsStatsSnapshot::Format() const {
  std::string text = absl::StrCat(
      "tls_handshakes_full=", handshakes_full, " tls_handshakes_resumed=", handshakes_resumed,
      " tls_failed=", failed_total(), " tls13=", tls13, " tls12=", tls12,
      " tls_alpn_selected=", alpn_selected, " tls_alpn_absent=", alpn_absent,
      " tls_tickets_unknown_key=", tickets_unknown_key,
      " tls_close_notify_received=", close_notify_received,
      " tls_hello_retry_requests=", hello_retry_requests);
  absl::StrAppend(&text, " tls_handshakes_engine{engine=\"onepass\"}=", handshakes_onepass_engine,
                  " tls_handshakes_engine{engine=\"openssl\"}=", handshakes_openssl_engine());
  for (int i = 0; i < tls13::kFallbackCount; ++i) {
    absl::StrAppend(&text, " tls_fallback{reason=\"",
                    tls13::FallbackName(static_cast<tls13::Fallback>(i + 1)), "\"}=", fallback[i]);
  }
  for (int i = 0; i < kTlsCipherCount; ++i) {
    absl::StrAppend(&text, " tls_cipher{suite=\"", TlsCipherName(i), "\"}=", cipher[i]);
  }
  for (int i = 0; i < kTlsFailureCount; ++i) {
    absl::StrAppend(&text, " tls_failed{reason=\"", TlsFailureName(static_cast<TlsFailure>(i + 1)),
                    "\"}=", failed[i]);
  }
  return text;
}

TlsStatsSnapshot TlsStats::Read() const {
  TlsStatsSnapshot snapshot;
  auto load = [](const std::atomic<uint64_t>& n) { return n.load(std::memory_order_relaxed); };
  snapshot.handshakes_full = load(handshakes_full);
  snapshot.handshakes_resumed = load(handshakes_resumed);
  snapshot.tls13 = load(tls13);
  snapshot.tls12 = load(tls12);
  snapshot.alpn_selected = load(alpn_selected);
  snapshot.alpn_absent = load(alpn_absent);
  snapshot.tickets_unknown_key = load(tickets_unknown_key);
  snapshot.close_notify_received = load(close_notify_received);
  snapshot.hello_retry_requests = load(hello_retry_requests);
  snapshot.handshakes_onepass_engine = load(handshakes_onepass_engine);
  for (int i = 0; i < tls13::kFallbackCount; ++i) snapshot.fallback[i] = load(fallback[i]);
  for (int i = 0; i < kTlsCipherCount; ++i) snapshot.cipher[i] = load(cipher[i]);
  for (int i = 0; i < kTlsFailureCount; ++i) snapshot.failed[i] = load(failed[i]);
  return snapshot;
}

}  // namespace onepass::tls
