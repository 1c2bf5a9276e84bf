// A descriptor is closed only in the table that opened it (common/descriptor_table.h): the
// defect was a sealed CRL file, made on the main thread after a worker took a table of its
// own, destroyed on that worker, which closed the worker's own file under the same number.
#include "common/descriptor_table.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <memory>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/scoped_fd.h"
#include "common/sealed_bytes.h"
#include "gtest/gtest.h"
#include "tests/support/wait_for.h"

namespace onepass {
namespace {

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) >= 0; }

TEST(DescriptorTableTest, EachUnshareIsANewTable) {
  EXPECT_EQ(ThisThreadsDescriptorTable(), kProcessDescriptorTable);
  DescriptorTableId first = kProcessDescriptorTable;
  DescriptorTableId second = kProcessDescriptorTable;
  std::thread([&] {
    ASSERT_TRUE(UsePrivateDescriptorTable().ok());
    first = ThisThreadsDescriptorTable();
  }).join();
  std::thread([&] {
    ASSERT_TRUE(UsePrivateDescriptorTable().ok());
    second = ThisThreadsDescriptorTable();
  }).join();
  EXPECT_NE(first, kProcessDescriptorTable);
  EXPECT_NE(second, kProcessDescriptorTable);
  EXPECT_NE(first, second);
  EXPECT_EQ(ThisThreadsDescriptorTable(), kProcessDescriptorTable);
}

// The shape of the defect: the worker holds its own file under the number the process's
// sealed file has; the sealed bytes die on the worker. The worker's file stays open, the
// process's file is closed (by the closer), and the bytes stay readable until then.
TEST(DescriptorTableTest, SealedBytesLetGoOfOnAWorkerCloseInTheProcessTable) {
  EnableProcessTableCloser();
  const CloserCounts before = ReadCloserCounts();
  std::unique_ptr<const SealedBytes> bytes;
  int number = -1;
  bool worker_file_open = false;
  std::thread worker([&] {
    ASSERT_TRUE(UsePrivateDescriptorTable().ok());
    // Made on the process's table after the worker unshared, as a reload makes a CRL's file.
    std::thread([&] {
      auto made = SealedBytes::Make("test", "a CRL of the previous load");
      ASSERT_TRUE(made.ok()) << made.status();
      bytes = *std::move(made);
    }).join();
    number = bytes->fd();
    // This worker's own file under the same number (its listener, in the defect).
    const int own = eventfd(0, EFD_CLOEXEC);
    ASSERT_GE(own, 0);
    ASSERT_EQ(dup2(own, number), number);
    close(own);
    bytes.reset();  // the last reader ends on the worker
    worker_file_open = IsOpen(number);
    close(number);
  });
  worker.join();
  EXPECT_TRUE(worker_file_open) << "the worker's own file was closed in its place";
  ASSERT_TRUE(::onepass::testing::WaitFor(
      [&] { return ReadCloserCounts().closed >= before.closed + 1; }, absl::Seconds(10)));
  EXPECT_FALSE(IsOpen(number)) << "the sealed file stays open in the process's table";
  EXPECT_EQ(ReadCloserCounts().leaked, before.leaked);
}

TEST(DescriptorTableTest, ClosedAtOnceOnTheOpeningTable) {
  const CloserCounts before = ReadCloserCounts();
  const int fd = eventfd(0, EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  CloseInOpeningTable(fd, ThisThreadsDescriptorTable());
  EXPECT_FALSE(IsOpen(fd));
  EXPECT_EQ(ReadCloserCounts().queued, before.queued);
}

TEST(DescriptorTableTest, AScopedFdAdoptedAfterAnUnshareClosesTheCopyOfItsTable) {
  ScopedFd listener(eventfd(0, EFD_CLOEXEC));
  const int number = listener.get();
  bool copy_open_after = true;
  std::thread([&] {
    ASSERT_TRUE(UsePrivateDescriptorTable().ok());
    listener.AdoptIntoThisTable();
    listener.Reset();
    copy_open_after = IsOpen(number);
  }).join();
  EXPECT_FALSE(copy_open_after);
  EXPECT_TRUE(IsOpen(number)) << "the process's original is its opener's";
  close(number);
}

#ifndef NDEBUG
// The debug check: a ScopedFd of the process's table closed on a worker with a table of its
// own stops the process, naming what was closed where.
TEST(DescriptorTableDeathTest, AScopedFdClosedOnAnotherTableStopsADebugBuild) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        ScopedFd fd(eventfd(0, EFD_CLOEXEC));
        std::thread([&] {
          if (!UsePrivateDescriptorTable().ok()) return;
          fd.Reset();
        }).join();
      },
      "is closed on a thread of table");
}
#endif

}  // namespace
}  // namespace onepass
