#include "server/core/body_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace onepass {
namespace {

struct OpenedFile {
  const void* owner;  // SharedBody::owner, with the file number it holds open
  int shared_fd;
  std::weak_ptr<const void> alive;
  int local_fd;
};

// Per thread, so that each descriptor is opened and closed in the table of the thread that
// uses it; the destructor runs on that thread when it ends, before its table goes.
class OpenedFiles {
 public:
  ~OpenedFiles() {
    for (const OpenedFile& file : files_) close(file.local_fd);
  }
  int Find(const SharedBody& body) const {
    for (const OpenedFile& file : files_) {
      // An expired owner's address may come back with a new load: it never matches.
      if (file.owner == body.owner.get() && file.shared_fd == body.file && !file.alive.expired()) {
        return file.local_fd;
      }
    }
    return -1;
  }
  void CloseExpired() {
    std::erase_if(files_, [](const OpenedFile& file) {
      if (!file.alive.expired()) return false;
      close(file.local_fd);
      return true;
    });
  }
  int Open(const SharedBody& body) {
    // A miss comes once per file per load: the files of data no longer served go first.
    CloseExpired();
    // The owner is alive (the body holds it), so body.file is still its file in the leader's
    // table: no other file can have taken the number.
    char path[32];
    std::snprintf(path, sizeof(path), "/proc/self/fd/%d", body.file);
    const int local = open(path, O_RDONLY | O_CLOEXEC);
    if (local < 0) return -1;
    files_.push_back({body.owner.get(), body.file, body.owner, local});
    return local;
  }

 private:
  std::vector<OpenedFile> files_;
};

thread_local OpenedFiles opened_files;

}  // namespace

int BodyFileForThisThread(const SharedBody& body) {
  if (body.file < 0 || body.owner == nullptr) return -1;
  const int found = opened_files.Find(body);
  return found >= 0 ? found : opened_files.Open(body);
}

void CloseBodyFilesNoLongerServed() { opened_files.CloseExpired(); }

}  // namespace onepass
