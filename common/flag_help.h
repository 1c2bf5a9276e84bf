// --help for the project's programs: the usage text, then each chosen flag with its name as
// documented (hyphens), its default and its help, to stdout. Abseil's own --help exits 1 and
// lists flags under their C++ names ('_'), with every library's flags mixed in.
#ifndef ONEPASS_COMMON_FLAG_HELP_H_
#define ONEPASS_COMMON_FLAG_HELP_H_

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/strings/string_view.h"

namespace onepass {

// True if argv (as NormalizeArguments returns it) asks for help: --help, -help, -h or
// --helpshort, before any "--". --helpfull is left to Abseil (every flag of every library).
bool WantsHelp(const std::vector<std::string>& args);

// The flag's name as the documentation writes it: "read_timeout_ms" → "read-timeout-ms".
std::string DashedFlagName(absl::string_view name);

// "<usage>\n\nFlags (--name value or --name=value):\n" then for each flag, in the order given:
//   "  --name  (default: VALUE)\n      HELP\n"  (VALUE "none" when the default is empty).
std::string FormatFlagHelp(absl::string_view usage,
                           const std::vector<const absl::CommandLineFlag*>& flags);

}  // namespace onepass

#endif  // ONEPASS_COMMON_FLAG_HELP_H_
