// A file descriptor closed when it goes out of scope.
#ifndef ONEPASS_SERVER_SCOPED_FD_H_
#define ONEPASS_SERVER_SCOPED_FD_H_

#include <unistd.h>

#include <utility>

namespace onepass {

class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(ScopedFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) Reset(std::exchange(other.fd_, -1));
    return *this;
  }
  ~ScopedFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_SCOPED_FD_H_
