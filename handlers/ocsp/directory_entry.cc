#include "handlers/ocsp/directory_entry.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onepass::ocsp {
namespace {

// "a FIFO" for a stat mode that is not a regular file.
const char* KindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "an entry of another type";
}

// The target a symlink names, as written in it ("" when unreadable).
std::string LinkTarget(const std::string& path) {
  char target[4096];
  const ssize_t n = readlink(path.c_str(), target, sizeof(target));
  return n <= 0 ? std::string() : std::string(target, static_cast<size_t>(n));
}

}  // namespace

EntryType StatEntry(const std::string& path) {
  struct stat link_info {};
  if (lstat(path.c_str(), &link_info) != 0) {
    return {EntryKind::kOther, absl::StrCat("cannot be read: ", std::strerror(errno))};
  }
  const bool is_link = S_ISLNK(link_info.st_mode);
  struct stat info {};
  if (is_link && stat(path.c_str(), &info) != 0) {
    const int error = errno;
    return {EntryKind::kOther,
            absl::StrCat("is a symlink to ", LinkTarget(path), ", which ",
                         error == ENOENT ? "does not exist"
                                         : absl::StrCat("cannot be read: ", std::strerror(error)))};
  }
  if (!is_link) info = link_info;
  if (S_ISREG(info.st_mode)) return {EntryKind::kRegular, ""};
  const EntryKind kind = S_ISDIR(info.st_mode) ? EntryKind::kDirectory : EntryKind::kOther;
  if (is_link) {
    return {kind, absl::StrCat("is a symlink to ", LinkTarget(path), ", ", KindName(info.st_mode),
                               ", not a regular file")};
  }
  return {kind, absl::StrCat("is ", KindName(info.st_mode), ", not a regular file")};
}

absl::Status CheckRegularFile(const std::string& path) {
  const EntryType type = StatEntry(path);
  if (type.kind == EntryKind::kRegular) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path, " ", type.what));
}

}  // namespace onepass::ocsp
