#include "common/descriptor_table.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace onepass {
namespace {

std::atomic<DescriptorTableId> last_table{kProcessDescriptorTable};

// RegisterProcessOnlyDescriptor's set; leaked like the closer (used until exit).
struct ProcessOnly {
  std::mutex mutex;
  std::vector<int> fds;  // guarded by mutex; a handful (one per large body)
};
ProcessOnly& TheProcessOnly() {
  static ProcessOnly* process_only = new ProcessOnly();
  return *process_only;
}
thread_local DescriptorTableId this_threads_table = kProcessDescriptorTable;

// The process table's closer: descriptors queued by workers, closed by its own thread, which
// never unshares. Leaked on purpose (a thread detached at start, alive until exit), so that no
// destructor order at exit can make a worker's last release queue into a closer gone.
struct Closer {
  std::mutex mutex;
  std::condition_variable wake;
  std::vector<int> queue;  // guarded by mutex
  bool started = false;    // guarded by mutex
  std::atomic<uint64_t> queued{0};
  std::atomic<uint64_t> closed{0};
  std::atomic<uint64_t> leaked{0};

  void Run() {
    std::vector<int> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [this] { return !queue.empty(); });
        batch.swap(queue);
      }
      for (int fd : batch) close(fd);
      closed.fetch_add(batch.size(), std::memory_order_relaxed);
      batch.clear();
    }
  }
};

Closer& TheCloser() {
  static Closer* closer = new Closer();
  return *closer;
}

void Leak(int fd, DescriptorTableId table) {
  TheCloser().leaked.fetch_add(1, std::memory_order_relaxed);
  static LogRateLimit limit("descriptor of another table");
  LogWarningLimited(limit,
                    "descriptor %d of table %d let go of on a thread of table %d, which cannot "
                    "close it; left open (a bug: please report it)",
                    fd, table, this_threads_table);
}

}  // namespace

DescriptorTableId ThisThreadsDescriptorTable() { return this_threads_table; }

absl::Status UsePrivateDescriptorTable() {
  ProcessOnly& process_only = TheProcessOnly();
  // Held across the unshare, so that no registered descriptor is closed meanwhile and then
  // reused under its number before this thread closes its copy.
  std::lock_guard<std::mutex> lock(process_only.mutex);
  if (unshare(CLONE_FILES) != 0) {
    return absl::Status(absl::ErrnoToStatusCode(errno),
                        absl::StrCat("unshare(CLONE_FILES): ", std::strerror(errno)));
  }
  this_threads_table = last_table.fetch_add(1, std::memory_order_relaxed) + 1;
  for (int fd : process_only.fds) close(fd);  // the copies in the new table
  return absl::OkStatus();
}

void RegisterProcessOnlyDescriptor(int fd) {
  ProcessOnly& process_only = TheProcessOnly();
  std::lock_guard<std::mutex> lock(process_only.mutex);
  process_only.fds.push_back(fd);
}

void UnregisterProcessOnlyDescriptor(int fd) {
  ProcessOnly& process_only = TheProcessOnly();
  std::lock_guard<std::mutex> lock(process_only.mutex);
  std::erase(process_only.fds, fd);
}

void EnableProcessTableCloser() {
  if (this_threads_table != kProcessDescriptorTable) return;  // it would close in the wrong one
  Closer& closer = TheCloser();
  std::lock_guard<std::mutex> lock(closer.mutex);
  if (closer.started) return;
  closer.started = true;
  std::thread([&closer] { closer.Run(); }).detach();
}

void CloseInOpeningTable(int fd, DescriptorTableId table) {
  if (fd < 0) return;
  if (table == this_threads_table) {
    close(fd);
    return;
  }
  if (table != kProcessDescriptorTable) {
    ExpectOpeningTable(table, "a descriptor of another worker's table");
    Leak(fd, table);
    return;
  }
  Closer& closer = TheCloser();
  {
    std::lock_guard<std::mutex> lock(closer.mutex);
    if (closer.started) {
      closer.queue.push_back(fd);
      closer.queued.fetch_add(1, std::memory_order_relaxed);
      closer.wake.notify_one();
      return;
    }
  }
  Leak(fd, table);
}

void ExpectOpeningTable(DescriptorTableId table, const char* what) {
#ifndef NDEBUG
  if (table == this_threads_table) return;
  LogError(
      "%s, opened in descriptor table %d, is closed on a thread of table %d, where its "
      "number is another file (common/descriptor_table.h)",
      what, table, this_threads_table);
  std::abort();
#else
  (void)table;
  (void)what;
#endif
}

CloserCounts ReadCloserCounts() {
  const Closer& closer = TheCloser();
  return {.queued = closer.queued.load(std::memory_order_relaxed),
          .closed = closer.closed.load(std::memory_order_relaxed),
          .leaked = closer.leaked.load(std::memory_order_relaxed)};
}

}  // namespace onepass
