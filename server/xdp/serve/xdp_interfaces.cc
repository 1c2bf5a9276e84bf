#include "server/xdp/serve/xdp_interfaces.h"

#include <dirent.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace onepass::xdp {
namespace {

// ETHTOOL_GCHANNELS: the driver's own count, in this network namespace.
absl::StatusOr<uint32_t> ChannelCount(const std::string& ifname) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(std::strerror(errno));
  ethtool_channels channels{};
  channels.cmd = ETHTOOL_GCHANNELS;
  ifreq request{};
  std::strncpy(request.ifr_name, ifname.c_str(), IFNAMSIZ - 1);
  request.ifr_data = reinterpret_cast<char*>(&channels);
  const int rc = ioctl(fd, SIOCETHTOOL, &request);
  const int error = errno;
  close(fd);
  if (rc != 0) return absl::UnavailableError(std::strerror(error));
  const uint32_t count = channels.rx_count + channels.combined_count;
  if (count == 0) return absl::UnavailableError("no channels reported");
  return count;
}

// /sys/class/net/IF/queues/rx-N: what the kernel set up (real_num_rx_queues).
absl::StatusOr<uint32_t> SysfsQueueCount(const std::string& ifname) {
  const std::string path = absl::StrCat("/sys/class/net/", ifname, "/queues");
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  uint32_t count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (absl::StartsWith(entry->d_name, "rx-")) ++count;
  }
  closedir(dir);
  if (count == 0) return absl::NotFoundError(absl::StrCat(path, " has no rx queue"));
  return count;
}

}  // namespace

absl::StatusOr<uint32_t> RxQueueCount(const std::string& ifname) {
  absl::StatusOr<uint32_t> channels = ChannelCount(ifname);
  if (channels.ok()) return channels;
  return SysfsQueueCount(ifname);
}

std::string ProbeXdp(const std::string& ifname, XdpModePreference mode) {
  const int ifindex = static_cast<int>(if_nametoindex(ifname.c_str()));
  if (ifindex == 0) return absl::StrCat("unavailable: no interface ", ifname);
  if (absl::StatusOr<int> running = CountXdpSteer(ifindex); running.ok() && *running > 0) {
    // Attaching would remove the running server's copy (XdpProgram::Attach takes it as stale).
    return "in use by a running onepassd (its program is attached; not probed)";
  }
  absl::StatusOr<std::unique_ptr<XdpProgram>> program =
      XdpProgram::Attach({.ifname = ifname, .ports = {}, .mode = mode});
  if (!program.ok()) {
    return absl::StrCat("unavailable: ", program.status().message(),
                        " (the kernel's sockets serve alone)");
  }
  std::string line = DescribeMode(**program);
  if (absl::StatusOr<uint32_t> queues = RxQueueCount(ifname); queues.ok()) {
    absl::StrAppend(&line, ", ", *queues, " rx queue", *queues == 1 ? "" : "s");
  }
  return line;
}

}  // namespace onepass::xdp
