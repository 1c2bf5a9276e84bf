#include "common/arguments.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace onepass {
namespace {

bool IsListFlag(absl::string_view name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag != nullptr && flag->IsOfType<std::vector<std::string>>();
}

}  // namespace

std::vector<std::string> NormalizeArguments(int argc, char** argv) {
  std::vector<std::string> args;
  if (argc > 0) args.emplace_back(argv[0]);
  struct List {
    size_t position;  // of its merged argument in `args`
    std::vector<std::string> values;
  };
  std::vector<std::pair<std::string, List>> lists;  // in order of first appearance
  absl::flat_hash_map<std::string, size_t> list_index;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      for (; i < argc; ++i) args.emplace_back(argv[i]);
      break;
    }
    // A flag: '-' then a name (not a negative number given as a value).
    if (arg.size() < 2 || arg[0] != '-' || (arg[1] >= '0' && arg[1] <= '9')) {
      args.push_back(std::move(arg));
      continue;
    }
    const size_t start = arg.find_first_not_of('-');
    const size_t end = std::min(arg.find('='), arg.size());
    if (start == std::string::npos || start >= end) {
      args.push_back(std::move(arg));
      continue;
    }
    for (size_t k = start; k < end; ++k) {
      if (arg[k] == '-') arg[k] = '_';
    }
    const std::string name = arg.substr(start, end - start);
    if (!IsListFlag(name)) {
      args.push_back(std::move(arg));
      continue;
    }
    std::string value;
    if (end < arg.size()) {
      value = arg.substr(end + 1);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      args.push_back(std::move(arg));  // let Abseil report the missing value
      continue;
    }
    auto [it, inserted] = list_index.try_emplace(name, lists.size());
    if (inserted) {
      lists.push_back({name, List{args.size(), {}}});
      args.emplace_back();  // filled below
    }
    if (!value.empty()) lists[it->second].second.values.push_back(std::move(value));
  }
  for (const auto& [name, list] : lists) {
    args[list.position] = absl::StrCat("--", name, "=", absl::StrJoin(list.values, ","));
  }
  return args;
}

}  // namespace onepass
