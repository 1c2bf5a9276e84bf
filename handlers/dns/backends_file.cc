#include "handlers/dns/backends_file.h"

#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/data_file.h"

namespace onepass::dns {

absl::StatusOr<std::vector<SocketAddress>> ParseBackendsFile(absl::string_view text,
                                                             absl::string_view path,
                                                             size_t max_backends) {
  std::vector<SocketAddress> backends;
  std::vector<std::string> errors;
  std::map<std::string, int> seen;  // normalized address -> the line that listed it first
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (static_cast<int>(errors.size()) >= kMaxBackendsFileErrors) break;
    const size_t comment = line.find('#');
    if (comment != absl::string_view::npos) line = line.substr(0, comment);
    line = absl::StripAsciiWhitespace(line);  // CR of CRLF files too
    if (line.empty()) continue;
    const std::string where = absl::StrCat(path, ":", line_number, ": ");
    if (line.find_first_of(" \t") != absl::string_view::npos) {
      errors.push_back(absl::StrCat(where, "one backend ADDR:PORT per line, found '", line, "'"));
      continue;
    }
    absl::StatusOr<SocketAddress> address =
        ParseSocketAddress(line, {.what = "--dns-backends-file address", .min_port = 1});
    if (!address.ok()) {
      errors.push_back(absl::StrCat(where, address.status().message()));
      continue;
    }
    const auto [first, inserted] = seen.emplace(address->ToString(), line_number);
    if (!inserted) {
      errors.push_back(absl::StrCat(where, "backend ", first->first, " is already listed on line ",
                                    first->second));
      continue;
    }
    if (backends.size() == max_backends) {
      errors.push_back(absl::StrCat(where, "more than --dns-max-backends=", max_backends,
                                    " backends; raise it (at start: it sizes the counters)"));
      continue;
    }
    backends.push_back(*address);
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  if (backends.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": names no backend (one ADDR:PORT per line)"));
  }
  return backends;
}

absl::StatusOr<std::vector<SocketAddress>> ReadBackendsFile(const std::string& path,
                                                            size_t max_backends) {
  absl::StatusOr<std::string> text = ReadDataFile(path, "--dns-backends-file");
  if (!text.ok()) return text.status();
  return ParseBackendsFile(*text, path, max_backends);
}

}  // namespace onepass::dns
