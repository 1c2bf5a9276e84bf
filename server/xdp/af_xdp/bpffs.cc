#include "server/xdp/af_xdp/bpffs.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace onepass::xdp {

bool BpffsMounted() {
  struct statfs fs {};
  return statfs(kBpffsPath, &fs) == 0 && fs.f_type == BPF_FS_MAGIC;
}

absl::Status EnsureBpffsMounted() {
  if (BpffsMounted()) return absl::OkStatus();
  // /sys/fs/bpf exists in every sysfs since Linux 4.4; mkdir covers a bare /sys/fs.
  if (mkdir(kBpffsPath, 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no bpffs at ", kBpffsPath, " and cannot create the directory: ", std::strerror(errno)));
  }
  if (mount("bpf", kBpffsPath, "bpf", 0, "mode=0700") != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no bpffs at ", kBpffsPath, " and mounting one failed (", std::strerror(errno),
                     "): run as root, or mount it first: mount -t bpf bpf ", kBpffsPath));
  }
  LogInfo(
      "mounted a bpffs at %s: libxdp's dispatcher pins its programs there (it stays "
      "mounted, as systemd would have it)",
      kBpffsPath);
  return absl::OkStatus();
}

}  // namespace onepass::xdp
