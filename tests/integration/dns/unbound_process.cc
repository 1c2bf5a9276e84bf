#include "tests/integration/dns/unbound_process.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/support/subprocess.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns::testing {

absl::StatusOr<std::unique_ptr<UnboundProcess>> UnboundProcess::Start(
    const std::string& local_data_path, int port) {
  if (port != 0) return StartOn(local_data_path, port);
  return StartOnFreePort<std::unique_ptr<UnboundProcess>>(
      [&](int free_port) { return StartOn(local_data_path, free_port); });
}

absl::StatusOr<std::unique_ptr<UnboundProcess>> UnboundProcess::StartOn(
    const std::string& local_data_path, int port) {
  std::unique_ptr<UnboundProcess> unbound(new UnboundProcess());
  char dir_template[] = "/tmp/onepass-unbound-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp");
  unbound->dir_ = dir_template;
  unbound->port_ = port;
  const std::string conf = unbound->dir_ + "/unbound.conf";
  {
    std::ofstream out(conf);
    out << "server:\n"
        << "  interface: 127.0.0.1@" << unbound->port_ << "\n"
        << "  port: " << unbound->port_ << "\n"
        << "  do-ip6: no\n"
        << "  do-daemonize: no\n"
        << "  chroot: \"\"\n"
        << "  username: \"\"\n"
        << "  directory: \"" << unbound->dir_ << "\"\n"
        << "  pidfile: \"" << unbound->dir_ << "/unbound.pid\"\n"
        << "  use-syslog: no\n"
        << "  logfile: \"\"\n"
        << "  verbosity: 1\n"
        << "  num-threads: 1\n"
        // No validator (no trust anchor to fetch), no recursion needed: local data only.
        << "  module-config: \"iterator\"\n"
        << "  access-control: 127.0.0.0/8 allow\n"
        // Records of an RRset in zone order every time, so two answers compare byte for byte.
        << "  rrset-roundrobin: no\n"
        << "  local-zone: \".\" refuse\n"
        << "  include: \"" << local_data_path << "\"\n"
        << "remote-control:\n"
        << "  control-enable: no\n";
  }
  auto check = onepass::testing::RunCommand({"unbound-checkconf", conf}, absl::Seconds(20));
  if (!check.ok()) return check.status();
  if (check->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("unbound-checkconf: ", check->err, check->out));
  }
  auto daemon = LoopbackDaemon::Start({"unbound", "-d", "-c", conf}, unbound->dir_ + "/unbound.log",
                                      unbound->port_, MakeQuery(".", "SOA"));
  if (!daemon.ok()) return daemon.status();
  unbound->daemon_ = *std::move(daemon);
  return unbound;
}

UnboundProcess::~UnboundProcess() {
  daemon_.reset();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string UnboundProcess::Log() const { return daemon_ != nullptr ? daemon_->Log() : ""; }

}  // namespace onepass::dns::testing
