// TLS 1.3 record protection (RFC 8446 §5.2, §5.3): one direction's AEAD under one traffic
// key, with its sequence number. Seal writes whole TLSCiphertext records; Open takes one.
#ifndef ONEPASS_SERVER_TLS_TLS13_CRYPTO_RECORD_PROTECTION_H_
#define ONEPASS_SERVER_TLS_TLS13_CRYPTO_RECORD_PROTECTION_H_

#include <openssl/evp.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "server/tls/tls13/crypto/cipher_suite.h"

namespace onepass::tls::tls13 {

// Alert descriptions, RFC 8446 §6.
inline constexpr uint8_t kAlertUnexpectedMessage = 10;
inline constexpr uint8_t kAlertBadRecordMac = 20;
inline constexpr uint8_t kAlertRecordOverflow = 22;
inline constexpr uint8_t kAlertDecodeError = 50;
inline constexpr uint8_t kAlertInternalError = 80;

inline constexpr size_t kRecordHeaderLength = 5;
inline constexpr size_t kMaxPlaintext = 1 << 14;           // §5.1
inline constexpr size_t kMaxCiphertext = (1 << 14) + 256;  // §5.2
// ContentType (§5.1).
inline constexpr uint8_t kContentChangeCipherSpec = 20;
inline constexpr uint8_t kContentAlert = 21;
inline constexpr uint8_t kContentHandshake = 22;
inline constexpr uint8_t kContentApplicationData = 23;

struct EvpCipherCtxDeleter {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};

struct OpenResult {
  bool ok = false;
  uint8_t alert = 0;         // when !ok: the alert to send (§6)
  uint8_t content_type = 0;  // when ok: TLSInnerPlaintext.type
};

// Per connection and direction, one thread. The cipher context is allocated once and keyed
// in Init(); each record only sets its nonce. Init() again (a KeyUpdate, §4.6.3) re-keys it
// and restarts the sequence number at 0.
class RecordProtection {
 public:
  enum class Direction { kSeal, kOpen };

  RecordProtection() = default;
  ~RecordProtection() { Reset(); }
  RecordProtection(const RecordProtection&) = delete;
  RecordProtection& operator=(const RecordProtection&) = delete;

  // key is KeyLength(suite) bytes, iv kIvLength bytes (from KeySchedule::TrafficKeys).
  bool Init(const SuiteAlgorithms& algorithms, CipherSuite suite, Direction direction,
            absl::Span<const uint8_t> key, absl::Span<const uint8_t> iv);
  // Wipes the iv and the key schedule inside the cipher context.
  void Reset();

  // Appends one record: 23 03 03 length | AEAD(plaintext | content_type | padding_len
  // zeros). False (nothing appended) when the inner plaintext would pass 2^14 + 1 bytes,
  // the sequence number is spent, or libcrypto fails.
  bool Seal(uint8_t content_type, absl::Span<const uint8_t> plaintext, size_t padding_len,
            std::vector<uint8_t>& out);
  // record: one whole record, header included. out is replaced by the content (padding and
  // type stripped).
  OpenResult Open(absl::Span<const uint8_t> record, std::vector<uint8_t>& out);

  uint64_t sequence_number() const { return seq_; }

 private:
  // §5.3: the per-record nonce is the iv XOR the 64-bit sequence number, left-padded.
  void Nonce(uint8_t nonce[kIvLength]) const;

  std::unique_ptr<EVP_CIPHER_CTX, EvpCipherCtxDeleter> ctx_{EVP_CIPHER_CTX_new()};
  uint8_t iv_[kIvLength] = {};
  uint64_t seq_ = 0;
  bool spent_ = false;  // the record with sequence number 2^64-1 went: no more (§5.3)
  bool ready_ = false;
  Direction direction_ = Direction::kSeal;
};

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_CRYPTO_RECORD_PROTECTION_H_
