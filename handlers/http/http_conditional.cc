#include "handlers/http/http_conditional.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace onepass::http {

bool IfNoneMatchMatches(absl::string_view field, absl::string_view etag) {
  if (absl::StripAsciiWhitespace(field) == "*") return true;
  while (!field.empty()) {
    const size_t comma = field.find(',');
    absl::string_view tag = absl::StripAsciiWhitespace(field.substr(0, comma));
    field = comma == absl::string_view::npos ? absl::string_view() : field.substr(comma + 1);
    if (absl::StartsWith(tag, "W/")) tag.remove_prefix(2);
    if (tag.size() == etag.size() + 2 && tag.front() == '"' && tag.back() == '"' &&
        tag.substr(1, etag.size()) == etag) {
      return true;
    }
  }
  return false;
}

}  // namespace onepass::http
