#include "common/flag_help.h"

#include "absl/strings/str_cat.h"

namespace onepass {

bool WantsHelp(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    // Not --helpfull: Abseil's listing of every flag, its libraries' included, stays reachable.
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpshort") return true;
  }
  return false;
}

std::string DashedFlagName(absl::string_view name) {
  std::string dashed(name);
  for (char& c : dashed) {
    if (c == '_') c = '-';
  }
  return dashed;
}

std::string FormatFlagHelp(absl::string_view usage,
                           const std::vector<const absl::CommandLineFlag*>& flags) {
  std::string text = absl::StrCat(usage, "\n\nFlags (--name value or --name=value):\n");
  for (const absl::CommandLineFlag* flag : flags) {
    const std::string default_value = flag->DefaultValue();
    absl::StrAppend(&text, "  --", DashedFlagName(flag->Name()),
                    "  (default: ", default_value.empty() ? "none" : default_value, ")\n      ",
                    flag->Help(), "\n");
  }
  return text;
}

}  // namespace onepass
