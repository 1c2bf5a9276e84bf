// onepassd's AF_XDP flags (--xdp, --xdp-mode, issue 40), read into ServerConfig, and what
// --check says of them.
#ifndef ONEPASS_SERVER_XDP_FLAGS_H_
#define ONEPASS_SERVER_XDP_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/server_config.h"

namespace onepass {

// --xdp's interfaces and --xdp-mode into `config`; an unknown mode is an error naming the flag.
absl::Status XdpFlagsIntoConfig(ServerConfig& config);

// --check: one line per --xdp interface, the mode an attach gets there now
// (server/xdp/serve/xdp_interfaces.h ProbeXdp). Empty without --xdp.
std::vector<std::string> CheckXdp(const ServerConfig& config);

}  // namespace onepass

#endif  // ONEPASS_SERVER_XDP_FLAGS_H_
