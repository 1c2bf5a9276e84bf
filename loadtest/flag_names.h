// Lets Abseil flags be spelled with dashes (--timeout-ms) as well as underscores
// (--timeout_ms), as the load tester's documentation and scripts write them.
#ifndef ONEPASS_LOADTEST_FLAG_NAMES_H_
#define ONEPASS_LOADTEST_FLAG_NAMES_H_

#include <string>
#include <vector>

namespace onepass::load {

// argv with '-' turned into '_' inside every "--name" (before any '='); values untouched,
// and nothing after a bare "--".
inline std::vector<std::string> NormalizeFlagNames(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 3 || arg[0] != '-' || arg[1] != '-') continue;
    size_t end = arg.find('=');
    if (end == std::string::npos) end = arg.size();
    for (size_t j = 2; j < end; ++j) {
      if (arg[j] == '-') arg[j] = '_';
    }
  }
  return args;
}

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_FLAG_NAMES_H_
