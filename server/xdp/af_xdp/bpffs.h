// The BPF file system at /sys/fs/bpf, where libxdp's dispatcher pins its programs and links so
// that several programs (ours and others') can share one interface and survive their loaders.
#ifndef ONEPASS_SERVER_XDP_AF_XDP_BPFFS_H_
#define ONEPASS_SERVER_XDP_AF_XDP_BPFFS_H_

#include "absl/status/status.h"

namespace onepass::xdp {

inline constexpr char kBpffsPath[] = "/sys/fs/bpf";

// True when a bpffs is mounted at kBpffsPath in this mount namespace.
bool BpffsMounted();

// Mounts a bpffs at kBpffsPath unless one is there (as systemd does at boot; many minimal
// hosts and containers lack it). The mount outlives the process on purpose: pins of a
// dispatcher that other programs share must stay. Logs the mount. FailedPrecondition when it
// cannot (not root, read-only /sys): libxdp then loads our program without a dispatcher, as the
// interface's only XDP program (XdpProgram logs which).
absl::Status EnsureBpffsMounted();

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_AF_XDP_BPFFS_H_
