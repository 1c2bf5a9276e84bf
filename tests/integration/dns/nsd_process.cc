#include "tests/integration/dns/nsd_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/support/subprocess.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns::testing {
namespace {

// A port the kernel just handed out on loopback (closed again; NSD binds it next).
absl::StatusOr<int> FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError("socket");
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return absl::InternalError("bind");
  }
  close(fd);
  return ntohs(addr.sin_port);
}

bool WaitExit(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NsdProcess>> NsdProcess::Start(const std::vector<ZoneFile>& zones,
                                                              int fixed_port) {
  if (zones.empty()) return absl::InvalidArgumentError("no zone");
  std::unique_ptr<NsdProcess> nsd(new NsdProcess());
  char dir_template[] = "/tmp/onepass-nsd-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp");
  nsd->dir_ = dir_template;
  for (size_t i = 0; i < zones.size(); ++i) {
    std::filesystem::copy_file(zones[i].path, absl::StrCat(nsd->dir_, "/zone", i));
  }
  absl::StatusOr<int> port = fixed_port != 0 ? absl::StatusOr<int>(fixed_port) : FreePort();
  if (!port.ok()) return port.status();
  nsd->port_ = *port;
  const std::string conf = nsd->dir_ + "/nsd.conf";
  {
    std::ofstream out(conf);
    out << "server:\n"
        << "  ip-address: 127.0.0.1@" << nsd->port_ << "\n"
        << "  do-ip6: no\n"
        << "  username: \"\"\n"
        << "  chroot: \"\"\n"
        << "  zonesdir: \"" << nsd->dir_ << "\"\n"
        << "  pidfile: \"" << nsd->dir_ << "/nsd.pid\"\n"
        << "  database: \"\"\n"
        << "  zonelistfile: \"" << nsd->dir_ << "/zone.list\"\n"
        << "  xfrdfile: \"" << nsd->dir_ << "/xfrd.state\"\n"
        << "  xfrdir: \"" << nsd->dir_ << "\"\n"
        << "  server-count: 1\n"
        << "  tcp-count: 200\n"
        << "  verbosity: 1\n"
        << "remote-control:\n"
        << "  control-enable: no\n";
    for (size_t i = 0; i < zones.size(); ++i) {
      out << "zone:\n  name: " << zones[i].origin << "\n  zonefile: zone" << i << "\n";
    }
  }
  auto check = onepass::testing::RunCommand({"nsd-checkconf", conf}, absl::Seconds(20));
  if (!check.ok()) return check.status();
  if (check->exit_code != 0) {
    return absl::FailedPreconditionError(absl::StrCat("nsd-checkconf: ", check->err, check->out));
  }
  const std::string log = nsd->dir_ + "/nsd.log";
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork");
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execlp("nsd", "nsd", "-d", "-c", conf.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  nsd->pid_ = pid;
  // Ready when it answers a query (bounded: 15 s).
  const auto probe = MakeQuery(zones[0].origin, "SOA");
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      nsd->pid_ = -1;
      return absl::FailedPreconditionError(absl::StrCat("nsd exited: ", nsd->Log()));
    }
    auto reply = ExchangeTcp(nsd->port_, {probe}, absl::Seconds(1));
    if (reply.ok() && reply->size() == 1) break;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat("nsd did not answer: ", nsd->Log()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return nsd;
}

NsdProcess::~NsdProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    if (!WaitExit(pid_, absl::Seconds(5))) {
      kill(pid_, SIGKILL);
      WaitExit(pid_, absl::Seconds(5));
    }
  }
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string NsdProcess::Log() const {
  std::ifstream in(dir_ + "/nsd.log");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace onepass::dns::testing
