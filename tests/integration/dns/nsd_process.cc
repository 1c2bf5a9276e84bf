#include "tests/integration/dns/nsd_process.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/support/subprocess.h"
#include "tests/unit/handlers/dns/dns_test_util.h"

namespace onepass::dns::testing {

absl::StatusOr<std::unique_ptr<NsdProcess>> NsdProcess::Start(const std::vector<ZoneFile>& zones,
                                                              int port) {
  if (zones.empty()) return absl::InvalidArgumentError("no zone");
  if (port != 0) return StartOn(zones, port);
  return StartOnFreePort<std::unique_ptr<NsdProcess>>(
      [&](int free_port) { return StartOn(zones, free_port); });
}

absl::StatusOr<std::unique_ptr<NsdProcess>> NsdProcess::StartOn(const std::vector<ZoneFile>& zones,
                                                                int port) {
  std::unique_ptr<NsdProcess> nsd(new NsdProcess());
  char dir_template[] = "/tmp/onepass-nsd-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp");
  nsd->dir_ = dir_template;
  for (size_t i = 0; i < zones.size(); ++i) {
    std::filesystem::copy_file(zones[i].path, absl::StrCat(nsd->dir_, "/zone", i));
  }
  nsd->port_ = port;
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
  auto daemon = LoopbackDaemon::Start({"nsd", "-d", "-c", conf}, nsd->dir_ + "/nsd.log", nsd->port_,
                                      MakeQuery(zones[0].origin, "SOA"));
  if (!daemon.ok()) return daemon.status();
  nsd->daemon_ = *std::move(daemon);
  return nsd;
}

NsdProcess::~NsdProcess() {
  daemon_.reset();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string NsdProcess::Log() const { return daemon_ != nullptr ? daemon_->Log() : ""; }

}  // namespace onepass::dns::testing
