#include "common/data_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

std::atomic<uint64_t> max_data_file_bytes{kDefaultMaxDataFileBytes};

std::string TooLarge(const std::string& path, absl::string_view what) {
  return absl::StrCat(what, " ", path, " is larger than --max-data-file-mb (",
                      MaxDataFileBytes() >> 20, " MiB); raise the flag if it is meant to be");
}

}  // namespace

void SetMaxDataFileBytes(uint64_t bytes) { max_data_file_bytes.store(bytes); }
uint64_t MaxDataFileBytes() { return max_data_file_bytes.load(); }

absl::StatusOr<OpenedDataFile> OpenDataFile(const std::string& path, absl::string_view what) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::NotFoundError(
        absl::StrCat("cannot open ", what, " ", path, ": ", std::strerror(errno)));
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const int error = errno;
    close(fd);
    return absl::InvalidArgumentError(
        S_ISREG(info.st_mode)
            ? absl::StrCat("cannot stat ", what, " ", path, ": ", std::strerror(error))
            : absl::StrCat(what, " ", path,
                           " is not a regular file (a device, FIFO or "
                           "directory); give the path of the file itself"));
  }
  if (static_cast<uint64_t>(info.st_size) > MaxDataFileBytes()) {
    close(fd);
    return absl::FailedPreconditionError(TooLarge(path, what));
  }
  // A regular file never blocks, but the flag would make a read report EAGAIN on some
  // filesystems (FUSE): clear it.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return OpenedDataFile{fd, static_cast<uint64_t>(info.st_size)};
}

absl::StatusOr<std::string> ReadDataFile(const std::string& path, absl::string_view what) {
  absl::StatusOr<OpenedDataFile> file = OpenDataFile(path, what);
  if (!file.ok()) return file.status();
  std::string text;
  text.reserve(file->size);
  char block[1 << 16];
  while (true) {
    const ssize_t n = read(file->fd, block, sizeof(block));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(file->fd);
      return absl::DataLossError(
          absl::StrCat("cannot read ", what, " ", path, ": ", std::strerror(error)));
    }
    if (text.size() + static_cast<size_t>(n) > MaxDataFileBytes()) {
      close(file->fd);
      return absl::FailedPreconditionError(TooLarge(path, what));
    }
    text.append(block, static_cast<size_t>(n));
  }
  close(file->fd);
  return text;
}

}  // namespace onepass
