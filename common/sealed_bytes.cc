#include "common/sealed_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

absl::Status KernelError(absl::string_view call) {
  return absl::ResourceExhaustedError(absl::StrCat(
      call, " failed: ", std::strerror(errno), " (large bodies are kept in sealed memory files)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<const SealedBytes>> SealedBytes::Make(const char* name,
                                                                     absl::string_view bytes) {
  if (bytes.empty()) return absl::InvalidArgumentError("SealedBytes of nothing");
  const int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return KernelError("memfd_create");
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const absl::Status error = KernelError("write to a memfd");
      close(fd);
      return error;
    }
    written += static_cast<size_t>(n);
  }
  // No writable mapping exists, so F_SEAL_WRITE takes; after F_SEAL_SEAL nothing can undo it.
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    const absl::Status error = KernelError("sealing a memfd");
    close(fd);
    return error;
  }
  void* mapped = mmap(nullptr, bytes.size(), PROT_READ, MAP_SHARED, fd, 0);
  if (mapped == MAP_FAILED) {
    const absl::Status error = KernelError("mmap of a memfd");
    close(fd);
    return error;
  }
  // Workers that unshare later close their copies: they reopen the file for themselves.
  if (ThisThreadsDescriptorTable() == kProcessDescriptorTable) RegisterProcessOnlyDescriptor(fd);
  return std::unique_ptr<const SealedBytes>(
      new SealedBytes(fd, static_cast<const uint8_t*>(mapped), bytes.size()));
}

SealedBytes::~SealedBytes() {
  munmap(const_cast<uint8_t*>(data_), size_);  // memory is the process's: any thread
  if (table_ == kProcessDescriptorTable) UnregisterProcessOnlyDescriptor(fd_);
  CloseInOpeningTable(fd_, table_);
}

}  // namespace onepass
