// TLS 1.3 alerts (RFC 8446 §6): the descriptions this engine sends, and the alert record body.
#ifndef ONEPASS_SERVER_TLS_TLS13_WIRE_ALERT_H_
#define ONEPASS_SERVER_TLS_TLS13_WIRE_ALERT_H_

#include <array>
#include <cstdint>

namespace onepass::tls::tls13 {

// RFC 8446 §6 (AlertDescription), RFC 8449 / RFC 7301 values included.
enum class AlertDescription : uint8_t {
  kCloseNotify = 0,
  kUnexpectedMessage = 10,
  kBadRecordMac = 20,
  kRecordOverflow = 22,
  kHandshakeFailure = 40,
  kBadCertificate = 42,
  kUnsupportedCertificate = 43,
  kCertificateRevoked = 44,
  kCertificateExpired = 45,
  kCertificateUnknown = 46,
  kIllegalParameter = 47,
  kUnknownCa = 48,
  kAccessDenied = 49,
  kDecodeError = 50,
  kDecryptError = 51,
  kProtocolVersion = 70,
  kInsufficientSecurity = 71,
  kInternalError = 80,
  kInappropriateFallback = 86,
  kUserCanceled = 90,
  kMissingExtension = 109,
  kUnsupportedExtension = 110,
  kUnrecognizedName = 112,
  kBadCertificateStatusResponse = 113,
  kUnknownPskIdentity = 115,
  kCertificateRequired = 116,
  kNoApplicationProtocol = 120,
};

// The two bytes of an alert record's plaintext (RFC 8446 §6): level, description. Every alert
// but close_notify (and user_canceled, §6.1) is fatal (level 2); those are warnings (level 1).
inline std::array<uint8_t, 2> AlertBody(AlertDescription description) {
  const bool warning = description == AlertDescription::kCloseNotify ||
                       description == AlertDescription::kUserCanceled;
  return {static_cast<uint8_t>(warning ? 1 : 2), static_cast<uint8_t>(description)};
}

}  // namespace onepass::tls::tls13

#endif  // ONEPASS_SERVER_TLS_TLS13_WIRE_ALERT_H_
