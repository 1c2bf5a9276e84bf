#include "server/epoll_finder.h"

#include <dirent.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace onepass {
namespace {

// Whether /proc/thread-self/fdinfo/`fd` is an epoll instance's that lists `watched_fd`
// ("tfd:        9 events:       19 data: ..."; no other kind of descriptor has tfd lines).
bool Watches(int fd, int watched_fd) {
  std::ifstream info(absl::StrCat("/proc/thread-self/fdinfo/", fd));
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind("tfd:", 0) != 0) continue;
    const size_t end = line.find(" events:");
    int target = -1;
    if (end != std::string::npos &&
        absl::SimpleAtoi(absl::string_view(line).substr(4, end - 4), &target) &&
        target == watched_fd) {
      return true;
    }
  }
  return false;
}

}  // namespace

int FindEpollWatching(int watched_fd) {
  // thread-self, not self: a thread with a table of its own (unshare(CLONE_FILES)) sees its own.
  std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir("/proc/thread-self/fdinfo"), closedir);
  if (dir == nullptr) return -1;
  while (const dirent* entry = readdir(dir.get())) {
    int fd = -1;
    if (absl::SimpleAtoi(entry->d_name, &fd) && fd != watched_fd && Watches(fd, watched_fd)) {
      return fd;
    }
  }
  return -1;
}

}  // namespace onepass
