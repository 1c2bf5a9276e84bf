#include "common/flagfile.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace onepass {
namespace {

constexpr int kMaxDepth = 4;

absl::Status Expand(const std::vector<std::string>& args, size_t first, int depth,
                    std::vector<std::string>& out);

absl::Status ReadFile(const std::string& path, int depth, std::vector<std::string>& out) {
  if (depth > kMaxDepth) {
    return absl::InvalidArgumentError(absl::StrCat("--flagfile ", path,
                                                   ": flagfiles nest deeper than ", kMaxDepth,
                                                   " (does one include itself?)"));
  }
  std::ifstream file(path);
  if (!file) {
    return absl::NotFoundError(
        absl::StrCat("--flagfile ", path, ": cannot read it: ", std::strerror(errno)));
  }
  std::vector<std::string> lines;
  std::string line;
  int number = 0;
  while (std::getline(file, line)) {
    ++number;
    absl::string_view text = absl::StripAsciiWhitespace(line);
    if (text.empty() || absl::StartsWith(text, "#")) continue;
    if (!absl::StartsWith(text, "-")) {
      return absl::InvalidArgumentError(
          absl::StrCat("--flagfile ", path, " line ", number, ": '", text,
                       "' is not a flag; write one --name=value (or --name value) per line (# "
                       "starts a comment)"));
    }
    // "--name value" as on a command line: two arguments (Abseil's own format is --name=value).
    const size_t space = text.find_first_of(" \t");
    if (space != absl::string_view::npos && space < text.find('=')) {
      lines.emplace_back(text.substr(0, space));
      lines.emplace_back(absl::StripAsciiWhitespace(text.substr(space)));
    } else {
      lines.emplace_back(text);
    }
  }
  return Expand(lines, 0, depth, out);
}

absl::Status Expand(const std::vector<std::string>& args, size_t first, int depth,
                    std::vector<std::string>& out) {
  for (size_t i = first; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") {  // the rest is not flags
      out.insert(out.end(), args.begin() + i, args.end());
      return absl::OkStatus();
    }
    std::string path;
    if (absl::ConsumePrefix(&arg, "--flagfile=") || absl::ConsumePrefix(&arg, "-flagfile=")) {
      path = std::string(arg);
    } else if ((arg == "--flagfile" || arg == "-flagfile") && i + 1 < args.size()) {
      path = args[++i];
    } else {
      out.push_back(args[i]);
      continue;
    }
    if (absl::Status read = ReadFile(path, depth + 1, out); !read.ok()) return read;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandFlagfiles(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  if (args.empty()) return out;
  out.push_back(args[0]);  // the program name
  if (absl::Status status = Expand(args, 1, 0, out); !status.ok()) return status;
  return out;
}

}  // namespace onepass
