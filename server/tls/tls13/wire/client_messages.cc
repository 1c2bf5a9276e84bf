#include "server/tls/tls13/wire/client_messages.h"

namespace onepass::tls::tls13 {

bool ParseFinished(absl::Span<const uint8_t> body, size_t hash_length,
                   absl::Span<const uint8_t>* verify_data) {
  if (body.size() != hash_length || hash_length == 0) return false;
  *verify_data = body;
  return true;
}

KeyUpdateResult ParseKeyUpdate(absl::Span<const uint8_t> body) {
  if (body.size() != 1) return {.ok = false, .alert = AlertDescription::kDecodeError};
  switch (body[0]) {
    case 0:  // update_not_requested
      return {.ok = true, .update_requested = false, .alert = AlertDescription::kCloseNotify};
    case 1:  // update_requested
      return {.ok = true, .update_requested = true, .alert = AlertDescription::kCloseNotify};
    default:
      return {.ok = false, .alert = AlertDescription::kIllegalParameter};
  }
}

}  // namespace onepass::tls::tls13
