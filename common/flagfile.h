// --flagfile FILE: the configuration file, in Abseil's format (one flag per line,
// "--name=value"; blank lines and lines starting with '#' ignored), expanded in place before
// the command line is normalized (common/arguments.h). Expanding it here rather than inside
// absl::ParseCommandLine lets the file use the documented spellings (--read-timeout-ms) and
// repeat list flags (--listen, --zone, --proxy-protocol-from) as the command line can.
// A flag given after --flagfile on the command line overrides the file's.
#ifndef ONEPASS_COMMON_FLAGFILE_H_
#define ONEPASS_COMMON_FLAGFILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace onepass {

// `args` with every "--flagfile=F" / "--flagfile F" replaced by F's flags (files may name
// further flagfiles, up to 4 deep). Errors name the file and say what is wrong.
absl::StatusOr<std::vector<std::string>> ExpandFlagfiles(const std::vector<std::string>& args);

}  // namespace onepass

#endif  // ONEPASS_COMMON_FLAGFILE_H_
