// --xdp's interfaces at start: the XDP program attached to each (XdpProgram), how many rx
// queues each has (so worker k serves queue k where there is one), and the lines that say it
// (the start-up log and --check). Owned by the Server, which destroys its workers (and with
// them the AF_XDP sockets) first: the program detaches from an interface no socket uses.
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
absl::StatusOr<uint32_t> RxQueueCount(const std::string& ifname);

// "native mode, through libxdp's dispatcher" / "generic mode, alone (without libxdp's
// dispatcher)".
std::string DescribeMode(const XdpProgram& program);

// For --check, which serves nothing: the mode an attach gets on `ifname` now, found by
// attaching with no port and detaching at once; an interface already carrying our program (a
// running onepassd) is left alone and said so. Never fails: the line says why not.
std::string ProbeXdp(const std::string& ifname, XdpModePreference mode);

struct AttachedInterface {
  std::string ifname;
  uint32_t queues = 0;
  std::unique_ptr<XdpProgram> program;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_SERVE_XDP_INTERFACES_H_
