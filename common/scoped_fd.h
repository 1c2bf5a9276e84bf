// A file descriptor closed when it goes out of scope, in the descriptor table it was opened in
// (common/descriptor_table.h): a debug build stops at a close on a thread of another table.
#ifndef ONEPASS_COMMON_SCOPED_FD_H_
#define ONEPASS_COMMON_SCOPED_FD_H_

#include <utility>

#include "common/descriptor_table.h"

namespace onepass {

class ScopedFd {
 public:
  ScopedFd() = default;
  // `fd` belongs to the calling thread's table.
  explicit ScopedFd(int fd) : fd_(fd), table_(ThisThreadsDescriptorTable()) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)), table_(other.table_) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      Close();
      fd_ = std::exchange(other.fd_, -1);
      table_ = other.table_;
    }
    return *this;
  }
  ~ScopedFd() { Close(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes the descriptor held, if any, and holds `fd` of the calling thread's table.
  void Reset(int fd = -1) {
    Close();
    fd_ = fd;
    table_ = ThisThreadsDescriptorTable();
  }
  // After this thread took a table of its own (UsePrivateDescriptorTable): the copy of the
  // descriptor in this thread's table is the one held from now on (a listener a worker
  // serves); the original in the old table is its opener's to close.
  void AdoptIntoThisTable() { table_ = ThisThreadsDescriptorTable(); }

 private:
  void Close() {
    if (fd_ < 0) return;
    ExpectOpeningTable(table_, "a ScopedFd");
    CloseInOpeningTable(std::exchange(fd_, -1), table_);
  }

  int fd_ = -1;
  DescriptorTableId table_ = kProcessDescriptorTable;
};

}  // namespace onepass

#endif  // ONEPASS_COMMON_SCOPED_FD_H_
