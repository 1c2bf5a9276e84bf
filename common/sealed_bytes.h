// Immutable bytes kept in a sealed memory file (memfd_create(2)): mapped
// read-only for whoever reads them, and a descriptor that sendfile(2) can send from without
// copying them (the kernel hands the file's pages to the socket). For the large bodies a
// handler serves as they are, a CRL of several megabytes: loaded once, shared by every worker
// and every connection sending it, and no one can change them after the seal, not even the
// process that wrote them (F_SEAL_WRITE), so a connection still sending an old version after a
// reload sends it whole.
//
// Destroyed on any thread (the last connection sending an old CRL lets go of it on its
// worker): the file is closed in the descriptor table it was made in
// (common/descriptor_table.h), never under its number in the destroying thread's.
#ifndef ONEPASS_COMMON_SEALED_BYTES_H_
#define ONEPASS_COMMON_SEALED_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "common/descriptor_table.h"

namespace onepass {

class SealedBytes {
 public:
  // A sealed copy of `bytes` (not empty), the file named `name` in /proc/PID/fd (for whoever
  // looks). Fails with what the kernel said (no memfd, out of memory).
  static absl::StatusOr<std::unique_ptr<const SealedBytes>> Make(const char* name,
                                                                 absl::string_view bytes);
  ~SealedBytes();
  SealedBytes(const SealedBytes&) = delete;
  SealedBytes& operator=(const SealedBytes&) = delete;

  absl::Span<const uint8_t> bytes() const { return {data_, size_}; }
  absl::string_view view() const { return {reinterpret_cast<const char*>(data_), size_}; }
  // The file holding them from offset 0, a descriptor of the table of the thread that made
  // them (a worker with a table of its own opens its own: server/core/body_files.h); valid as
  // long as this object.
  int fd() const { return fd_; }

 private:
  SealedBytes(int fd, const uint8_t* data, size_t size)
      : fd_(fd), table_(ThisThreadsDescriptorTable()), data_(data), size_(size) {}
  const int fd_;
  const DescriptorTableId table_;  // where fd_ was opened
  const uint8_t* const data_;
  const size_t size_;
};

}  // namespace onepass

#endif  // ONEPASS_COMMON_SEALED_BYTES_H_
