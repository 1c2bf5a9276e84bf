// What the TLS layer counts: handshakes by result, failures by cause, versions and ALPN.
//
// Owned by the caller (one TlsStats per worker, written on the worker's thread only):
// TlsSession adds to the block it is given and never reads it. The server exports them (the
// exit line, /metrics); the layer itself knows no exporter.
#ifndef ONEPASS_SERVER_TLS_TLS_STATS_H_
#define ONEPASS_SERVER_TLS_TLS_STATS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "server/tls/tls13/handshake/fallback.h"

namespace onepass::tls {

// Why a TLS session failed. One counter each (TlsStats::failed), in this order.
// REASON(name, help).
#define ONEPASS_TLS_FAILURES(REASON)                                                            \
  REASON(not_tls, "first bytes are no TLS handshake record (plain DNS, HTTP text, garbage)")    \
  REASON(bad_record, "a malformed, oversized or undecryptable TLS record")                      \
  REASON(protocol_version, "the client offers no TLS version allowed (1.3; 1.2 if enabled)")    \
  REASON(no_alpn_match, "the client offers ALPN without any of ours (RFC 7301 §3.2 alert)")     \
  REASON(no_shared_params, "no cipher suite, group or signature scheme in common")              \
  REASON(peer_alert, "the client sent a fatal alert (it refused our certificate, say)")         \
  REASON(peer_closed, "the client closed mid-handshake without an alert (gave up, or refused)") \
  REASON(handshake, "a handshake message that breaks the protocol")                             \
  REASON(handshake_too_large, "more handshake bytes than TlsConfig::max_handshake_bytes")       \
  REASON(output_full, "more pending output than TlsConfig::max_output_bytes")                   \
  REASON(limit, "refused by a handshake limit (per client prefix: rate, or in progress)")       \
  REASON(evicted, "closed waiting, to make room for a new one (--tls-max-handshakes all held)") \
  REASON(timeout, "the handshake was not done within the read timeout (counted by the server)") \
  REASON(internal, "a TLS library error not classified above")

enum class TlsFailure : uint8_t {
  kNone = 0,
#define ONEPASS_TLS_ENUM(name, help) k_##name,
  ONEPASS_TLS_FAILURES(ONEPASS_TLS_ENUM)
#undef ONEPASS_TLS_ENUM
};

#define ONEPASS_TLS_COUNT(name, help) +1
inline constexpr int kTlsFailureCount = 0 ONEPASS_TLS_FAILURES(ONEPASS_TLS_COUNT);
#undef ONEPASS_TLS_COUNT

// "not_tls", ... ("none" for kNone): for log lines and metric labels.
absl::string_view TlsFailureName(TlsFailure failure);

// The cipher suites a handshake may settle on, as counted: TLS 1.3's three (RFC 8446 §B.4) and
// everything else (TLS 1.2's ECDHE suites) as "other".
inline constexpr int kTlsCipherCount = 4;
// "aes128gcm", "aes256gcm", "chacha20", "other".
absl::string_view TlsCipherName(int index);

// TlsStats read at one moment, as plain values (summed over workers for the exit line and
// /metrics).
struct TlsStatsSnapshot {
  uint64_t handshakes_full = 0;
  uint64_t handshakes_resumed = 0;
  uint64_t tls13 = 0;
  uint64_t tls12 = 0;
  uint64_t alpn_selected = 0;
  uint64_t alpn_absent = 0;
  uint64_t tickets_unknown_key = 0;
  uint64_t close_notify_received = 0;
  uint64_t hello_retry_requests = 0;
  uint64_t handshakes_onepass_engine = 0;
  uint64_t fallback[tls13::kFallbackCount] = {};
  uint64_t cipher[kTlsCipherCount] = {};
  uint64_t failed[kTlsFailureCount] = {};

  uint64_t failed_total() const {
    uint64_t sum = 0;
    for (uint64_t n : failed) sum += n;
    return sum;
  }
  // Completed handshakes OpenSSL's engine served: all of them but the onepass engine's.
  uint64_t handshakes_openssl_engine() const {
    const uint64_t completed = handshakes_full + handshakes_resumed;
    return completed - std::min(completed, handshakes_onepass_engine);
  }
  TlsStatsSnapshot& operator+=(const TlsStatsSnapshot& other);
  // "tls_handshakes_full=N tls_handshakes_resumed=N ... tls_failed{reason="not_tls"}=N ...":
  // the exit line's form.
  std::string Format() const;
};

// Counted on the worker's thread, read by others (the exit line, the metrics listener): relaxed
// atomics, like the server's WorkerStats. An increment is a locked add: a handful per handshake,
// which costs hundreds of microseconds anyway.
struct TlsStats {
  std::atomic<uint64_t> handshakes_full{0};     // completed without resumption
  std::atomic<uint64_t> handshakes_resumed{0};  // completed from a session ticket
  std::atomic<uint64_t> tls13{0};               // completed handshakes by version
  std::atomic<uint64_t> tls12{0};
  std::atomic<uint64_t> alpn_selected{0};  // the client offered ALPN and got one of ours ("dot")
  std::atomic<uint64_t> alpn_absent{0};    // the client offered no ALPN (served, RFC 7858 §3.1)
  std::atomic<uint64_t> tickets_unknown_key{0};  // a ticket of a key no longer in use: full
  std::atomic<uint64_t> close_notify_received{0};
  // The onepass engine (server/tls/onepass/): handshakes that needed a HelloRetryRequest (the
  // client shared no key on a group of ours), completed handshakes it served itself (the rest
  // of handshakes_full + handshakes_resumed, OpenSSL's), and ClientHellos handed to the OpenSSL
  // engine, by reason (tls13::Fallback, indexed by its value - 1).
  std::atomic<uint64_t> hello_retry_requests{0};
  std::atomic<uint64_t> handshakes_onepass_engine{0};
  std::atomic<uint64_t> fallback[tls13::kFallbackCount] = {};
  // Completed handshakes by cipher suite (TlsCipherName order).
  std::atomic<uint64_t> cipher[kTlsCipherCount] = {};
  // Failed sessions by TlsFailure, indexed by static_cast<int>(failure) - 1.
  std::atomic<uint64_t> failed[kTlsFailureCount] = {};

  uint64_t failed_total() const {
    uint64_t sum = 0;
    for (const std::atomic<uint64_t>& n : failed) sum += n.load(std::memory_order_relaxed);
    return sum;
  }
  std::atomic<uint64_t>& failed_by(TlsFailure failure) {
    return failed[static_cast<int>(failure) - 1];
  }
  const std::atomic<uint64_t>& failed_by(TlsFailure failure) const {
    return failed[static_cast<int>(failure) - 1];
  }
  std::atomic<uint64_t>& fallback_by(int reason) { return fallback[reason - 1]; }
  TlsStatsSnapshot Read() const;
};

}  // namespace onepass::tls

#endif  // ONEPASS_SERVER_TLS_TLS_STATS_H_
