// EnsureBpffsMounted mounts a bpffs where there is none. Run in a child with a mount namespace
// of its own, where /sys/fs/bpf is unmounted first: the host's mounts are not touched.
#include "server/xdp/af_xdp/bpffs.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace onepass::xdp {
namespace {

// 0: mounted by EnsureBpffsMounted; other values say which step failed.
[[noreturn]] void MountInPrivateNamespace() {
  alarm(20);
  if (unshare(CLONE_NEWNS) != 0) _exit(10);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(11);
  while (BpffsMounted()) {
    if (umount2(kBpffsPath, MNT_DETACH) != 0) _exit(12);
  }
  if (!EnsureBpffsMounted().ok()) _exit(13);
  if (!BpffsMounted()) _exit(14);
  if (!EnsureBpffsMounted().ok()) _exit(15);  // a second call finds it
  _exit(0);
}

TEST(BpffsTest, MountsOneWhereThereIsNone) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: mount namespaces and mount(2)";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) MountInPrivateNamespace();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace onepass::xdp
