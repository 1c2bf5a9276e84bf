// Opening the data files a handler serves (zones, the Whois database, OCSP responses) so that a
// wrong path cannot hang or crash the server: a FIFO without a writer would block the loading
// thread, /dev/zero or a runaway file would read until std::bad_alloc. Only regular files are
// read, opened without blocking, and none larger than a size cap (--max-data-file-mb).
#ifndef ONEPASS_COMMON_DATA_FILE_H_
#define ONEPASS_COMMON_DATA_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace onepass {

// The largest data file any handler reads [bytes]. Process-wide, set once at startup from
// --max-data-file-mb (server/server_main.cc) before any data is loaded.
inline constexpr uint64_t kDefaultMaxDataFileBytes = uint64_t{4} << 30;  // 4 GiB
void SetMaxDataFileBytes(uint64_t bytes);
uint64_t MaxDataFileBytes();

// An open regular file of at most MaxDataFileBytes(): the descriptor (O_CLOEXEC, blocking reads
// from then on) and its size at open. The caller closes it. Errors name `what` and `path` and
// say what is wrong (not a regular file, too large: the flag to raise).
struct OpenedDataFile {
  int fd = -1;
  uint64_t size = 0;
};
absl::StatusOr<OpenedDataFile> OpenDataFile(const std::string& path, absl::string_view what);

// The whole of a data file (OpenDataFile's checks), read to its end; a file that grows past the
// cap while being read is refused too.
absl::StatusOr<std::string> ReadDataFile(const std::string& path, absl::string_view what);

}  // namespace onepass

#endif  // ONEPASS_COMMON_DATA_FILE_H_
