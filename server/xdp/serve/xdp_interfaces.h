// --xdp's interfaces at start: the XDP program attached to each (XdpProgram), how many rx
// queues each has (so worker k serves queue k where there is one), and --check's line for each
// (ProbeXdp). Owned by the Server, which destroys its workers (and with them the AF_XDP
// sockets) first: the program detaches from an interface no socket uses.
#ifndef ONEPASS_SERVER_XDP_SERVE_XDP_INTERFACES_H_
#define ONEPASS_SERVER_XDP_SERVE_XDP_INTERFACES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/xdp/af_xdp/xdp_program.h"

namespace onepass::xdp {

// The rx queues of `ifname` (ethtool's rx + combined channels; else /sys/class/net/IF/queues).
// Asked after XdpProgram::Attach, which is the one to say that an interface does not exist.
absl::StatusOr<uint32_t> RxQueueCount(const std::string& ifname);

// For --check, which serves nothing: the mode an attach gets on `ifname` now, found by
// attaching with no port and detaching at once; an interface already carrying our program (a
// running onepassd) is left alone and said so. Never fails: the line says why not.
std::string ProbeXdp(const std::string& ifname, XdpModePreference mode);

struct AttachedInterface {
  std::string ifname;
  std::unique_ptr<XdpProgram> program;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_SERVE_XDP_INTERFACES_H_
