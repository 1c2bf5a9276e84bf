// HTTP dates (IMF-fixdate, RFC 9110 §5.6.7), formatted without allocation for the hot path.
#ifndef ONEPASS_HANDLERS_HTTP_HTTP_DATE_H_
#define ONEPASS_HANDLERS_HTTP_HTTP_DATE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/optional.h"

namespace onepass::http {

// "Sun, 06 Nov 1994 08:49:37 GMT"
inline constexpr size_t kHttpDateBytes = 29;
using HttpDateBuffer = std::array<char, kHttpDateBytes>;

// Writes `time` (truncated to the second; years clamped to 0000..9999) into `out`.
void FormatHttpDate(absl::Time time, HttpDateBuffer& out);

// Reads an IMF-fixdate (the only form a sender may generate, RFC 9110 §5.6.7); nullopt for
// anything else, which If-Modified-Since then ignores (RFC 9110 §13.1.3). No allocation.
absl::optional<absl::Time> ParseHttpDate(absl::string_view text);

// The same as a string, for load-time use.
std::string HttpDate(absl::Time time);

// Formats the current second once and reuses it: a worker answers many requests per second.
// Thread-confined (one per Handler).
class HttpDateCache {
 public:
  absl::string_view Get(absl::Time now) {
    const int64_t second = absl::ToUnixSeconds(now);
    if (second != second_ || !valid_) {
      FormatHttpDate(now, buffer_);
      second_ = second;
      valid_ = true;
    }
    return absl::string_view(buffer_.data(), buffer_.size());
  }

 private:
  HttpDateBuffer buffer_{};
  int64_t second_ = 0;
  bool valid_ = false;
};

}  // namespace onepass::http

#endif  // ONEPASS_HANDLERS_HTTP_HTTP_DATE_H_
