// Command-line spelling that Abseil's parser does not accept by itself, rewritten before it
// parses: flag names with '-' (--read-timeout-ms, as documented) and repeated list flags.
// Every program of the project (onepassd, onepass-load, onepass-reference) runs its argv
// through this, so they all take the same spellings.
#ifndef ONEPASS_COMMON_ARGUMENTS_H_
#define ONEPASS_COMMON_ARGUMENTS_H_

#include <string>
#include <vector>

namespace onepass {

// Returns argv for absl::ParseCommandLine with:
//  - '-' in a flag's name turned into '_' (--read-timeout-ms → --read_timeout_ms; values are
//    left alone);
//  - every occurrence of a registered flag of type std::vector<std::string> (onepassd's
//    --listen, --zone, any future list flag) merged, in order, into one --name=v1,v2,... at the
//    place of the first. Debian's Abseil replaces a list flag on each repeat, so without this
//    `--zone a.zone --zone b.zone` would serve b.zone only. Both `--name=V` and `--name V`
//    count; empty values are dropped; comma-separated values stay as they are.
// Everything after "--" is left as it is. A list flag with no value at the end is passed on
// for Abseil to report.
std::vector<std::string> NormalizeArguments(int argc, char** argv);

}  // namespace onepass

#endif  // ONEPASS_COMMON_ARGUMENTS_H_
