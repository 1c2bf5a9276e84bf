// What a directory entry of --crl-dir or --ocsp-responses is, when it is not a regular file:
// the walks of those directories name it ("DIR/ca.crl is a FIFO, not a regular file") instead
// of passing over it, as a zone's $INCLUDE of one is an error (common/data_file.h). Found by
// stat(2) and lstat(2) alone: the entry is never opened, so a FIFO without a writer cannot
// block the load and /dev/zero is never read.
#ifndef ONEPASS_HANDLERS_OCSP_DIRECTORY_ENTRY_H_
#define ONEPASS_HANDLERS_OCSP_DIRECTORY_ENTRY_H_

#include <string>

#include "absl/status/status.h"

namespace onepass::ocsp {

enum class EntryKind {
  kRegular,  // a regular file, or a symlink (of any depth) to one
  kDirectory,
  kOther,  // a FIFO, a device, a socket, a dangling or looping symlink, an entry stat refuses
};

struct EntryType {
  EntryKind kind = EntryKind::kOther;
  // Unless kRegular, what is wrong, to follow the path: "is a FIFO, not a regular file",
  // "is a symlink to /dev/zero, a character device, not a regular file", "is a symlink to x,
  // which does not exist", "cannot be read: Permission denied".
  std::string what;
};

// The type of `path`, following symlinks; never opens it.
EntryType StatEntry(const std::string& path);

// OK when `path` is a regular file (or a symlink to one); otherwise InvalidArgument
// "PATH <what>" ("DIR/ca.crl is a FIFO, not a regular file"), directories included.
absl::Status CheckRegularFile(const std::string& path);

}  // namespace onepass::ocsp

#endif  // ONEPASS_HANDLERS_OCSP_DIRECTORY_ENTRY_H_
