#include "server/xdp_flags.h"

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "server/server_flags.h"
#include "server/xdp/serve/xdp_interfaces.h"

ABSL_FLAG(std::vector<std::string>, xdp, {},
          "Interfaces (comma-separated, e.g. eth0,eth1) whose rx queues also serve the TCP "
          "ports of --listen over AF_XDP: an XDP program steers those segments to a TCP of "
          "our own for one-query connections, worker k serving rx queue k (workers beyond the "
          "queue count serve the kernel's sockets only). The kernel's listeners stay beside "
          "it and serve everything else and every host where XDP cannot run. Bypasses the "
          "kernel's firewall, conntrack and ss (docs/operations.md \"The AF_XDP path\"). "
          "Needs root. Empty (the default): off.");
ABSL_FLAG(std::string, xdp_mode, "auto",
          "How --xdp's program runs: native (in the driver, before the kernel builds an skb; "
          "fails where the driver has no XDP), generic (after it: every driver, slower), auto "
          "(the default: native, else generic).");

namespace onepass {

absl::Status XdpFlagsIntoConfig(ServerConfig& config) {
  config.xdp = absl::GetFlag(FLAGS_xdp);
  const std::string mode = absl::GetFlag(FLAGS_xdp_mode);
  if (mode == "auto") {
    config.xdp_mode = XdpModeFlag::kAuto;
  } else if (mode == "native") {
    config.xdp_mode = XdpModeFlag::kNative;
  } else if (mode == "generic") {
    config.xdp_mode = XdpModeFlag::kGeneric;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--xdp-mode ", mode, ": choose native, generic or auto"));
  }
  if (!config.xdp.empty() && config.listen.empty() && !absl::GetFlag(FLAGS_check)) {
    return absl::InvalidArgumentError("--xdp serves the TCP ports of --listen: give a --listen");
  }
  return absl::OkStatus();
}

std::vector<std::string> CheckXdp(const ServerConfig& config) {
  const xdp::XdpModePreference mode = XdpPreferenceOf(config.xdp_mode);
  std::vector<std::string> lines;
  for (const std::string& ifname : config.xdp) {
    lines.push_back(absl::StrCat("check: xdp ", ifname, ": ", xdp::ProbeXdp(ifname, mode)));
  }
  return lines;
}

}  // namespace onepass
