#include "tests/unit/server/xdp/af_xdp/veth_namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/support/subprocess.h"

namespace onepass::testing {
namespace {

constexpr char kPrefix[] = "opaf-";  // no "xdp" in it: tests grep ip(8)'s output for that

absl::Status Run(const std::vector<std::string>& argv) {
  absl::StatusOr<CommandResult> result = RunCommand(argv, absl::Seconds(10));
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) {
    return absl::InternalError(
        absl::StrCat(absl::StrJoin(argv, " "), ": exit ", result->exit_code, ": ", result->err));
  }
  return absl::OkStatus();
}

// Namespaces "opaf-{s,c}-<pid>" of processes that are gone: left by a killed run.
void RemoveLeftovers() {
  absl::StatusOr<CommandResult> list = RunCommand({"ip", "netns", "list"}, absl::Seconds(10));
  if (!list.ok()) return;
  for (absl::string_view line : absl::StrSplit(list->out, '\n', absl::SkipEmpty())) {
    const std::string name(line.substr(0, line.find(' ')));
    if (name.rfind(kPrefix, 0) != 0) continue;
    int pid = 0;
    if (!absl::SimpleAtoi(name.substr(name.rfind('-') + 1), &pid) || pid <= 0) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue;
    (void)Run({"ip", "netns", "del", name});
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<VethNamespaces>> VethNamespaces::Create(int queues) {
  RemoveLeftovers();
  std::unique_ptr<VethNamespaces> self(new VethNamespaces());
  if (absl::Status status = self->Build(queues); !status.ok()) return status;
  return self;
}

absl::Status VethNamespaces::Build(int queues) {
  const std::string pid = absl::StrCat(getpid());
  const std::string s = absl::StrCat(kPrefix, "s-", pid);
  const std::string c = absl::StrCat(kPrefix, "c-", pid);
  if (absl::Status st = Run({"ip", "netns", "add", s}); !st.ok()) return st;
  server_ns_ = s;
  if (absl::Status st = Run({"ip", "netns", "add", c}); !st.ok()) return st;
  client_ns_ = c;
  const std::string q = absl::StrCat(queues);
  const std::vector<std::vector<std::string>> steps = {
      {"ip",
       "-n",
       s,
       "link",
       "add",
       kServerIf,
       "address",
       kServerMac,
       "numtxqueues",
       q,
       "numrxqueues",
       q,
       "type",
       "veth",
       "peer",
       "name",
       kClientIf,
       "address",
       kClientMac,
       "numtxqueues",
       q,
       "numrxqueues",
       q,
       "netns",
       c},
      {"ip", "-n", s, "addr", "add", absl::StrCat(kServerAddress, "/24"), "dev", kServerIf},
      {"ip", "-n", c, "addr", "add", absl::StrCat(kClientAddress, "/24"), "dev", kClientIf},
      // nodad: usable at once, not "tentative" for a second of duplicate detection.
      {"ip", "-n", s, "addr", "add", absl::StrCat(kServerAddress6, "/64"), "dev", kServerIf,
       "nodad"},
      {"ip", "-n", c, "addr", "add", absl::StrCat(kClientAddress6, "/64"), "dev", kClientIf,
       "nodad"},
      {"ip", "-n", s, "link", "set", "lo", "up"},
      {"ip", "-n", c, "link", "set", "lo", "up"},
      {"ip", "-n", s, "link", "set", kServerIf, "up"},
      {"ip", "-n", c, "link", "set", kClientIf, "up"},
      // Static neighbours: no ARP in the way (the XDP program passes ARP, but the test should
      // not depend on its timing).
      {"ip", "-n", s, "neigh", "replace", kClientAddress, "lladdr", kClientMac, "dev", kServerIf,
       "nud", "permanent"},
      {"ip", "-n", c, "neigh", "replace", kServerAddress, "lladdr", kServerMac, "dev", kClientIf,
       "nud", "permanent"},
      {"ip", "-n", s, "neigh", "replace", kClientAddress6, "lladdr", kClientMac, "dev", kServerIf,
       "nud", "permanent"},
      {"ip", "-n", c, "neigh", "replace", kServerAddress6, "lladdr", kServerMac, "dev", kClientIf,
       "nud", "permanent"},
      // With checksum offload a veth hands frames on with the TCP checksum unfinished (only a
      // kernel receiver knows to trust it); an AF_XDP socket sees the raw frame, and our TCP
      // would drop it as corrupt. A real NIC always sends finished checksums.
      {"ip", "netns", "exec", c, "ethtool", "-K", kClientIf, "tx", "off"},
  };
  for (const std::vector<std::string>& step : steps) {
    if (absl::Status st = Run(step); !st.ok()) return st;
  }
  server_fd_ = open(absl::StrCat("/run/netns/", s).c_str(), O_RDONLY | O_CLOEXEC);
  client_fd_ = open(absl::StrCat("/run/netns/", c).c_str(), O_RDONLY | O_CLOEXEC);
  if (server_fd_ < 0 || client_fd_ < 0) return absl::InternalError("cannot open /run/netns/*");
  return absl::OkStatus();
}

VethNamespaces::~VethNamespaces() {
  if (server_fd_ >= 0) close(server_fd_);
  if (client_fd_ >= 0) close(client_fd_);
  // Deleting a namespace deletes its end of the veth pair, and the peer with it.
  if (!server_ns_.empty()) (void)Run({"ip", "netns", "del", server_ns_});
  if (!client_ns_.empty()) (void)Run({"ip", "netns", "del", client_ns_});
}

absl::StatusOr<std::string> VethNamespaces::ServerLinkDetails() const {
  absl::StatusOr<CommandResult> result = RunCommand(
      {"ip", "-n", server_ns_, "-d", "link", "show", "dev", kServerIf}, absl::Seconds(10));
  if (!result.ok()) return result.status();
  if (result->exit_code != 0) return absl::InternalError(result->err);
  return result->out;
}

ScopedNetns::ScopedNetns(int ns_fd) {
  original_fd_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  ok_ = original_fd_ >= 0 && setns(ns_fd, CLONE_NEWNET) == 0;
}

ScopedNetns::~ScopedNetns() {
  if (original_fd_ < 0) return;
  if (ok_ && setns(original_fd_, CLONE_NEWNET) != 0) std::abort();  // the rest would run astray
  close(original_fd_);
}

}  // namespace onepass::testing
