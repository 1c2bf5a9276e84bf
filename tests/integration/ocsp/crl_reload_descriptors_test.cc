// End-to-end: CRL downloads that span reloads leave every worker's descriptor table as it was
// (issue "Hostile clients, round four", defect 1). A client reads part of a CRL large enough
// to go by sendfile from its snapshot's sealed file, the CA's next CRL is renamed in and
// SIGHUP sent, the client reads the rest: the old snapshot then dies on the worker. It used to
// close the leader-table number of its file in the worker's own table, where that number was
// the worker's listener: after a cycle or two nothing listened. Here, 20 cycles on each I/O
// driver: the downloads whole, every listener still listening, each worker's table unchanged
// (less the connections), and no sealed file left over in any table once its readers are gone.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/support/loopback_port.h"
#include "tests/support/metrics_client.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/wait_for.h"
#include "tests/unit/handlers/ocsp/test_crl.h"

namespace onepass::ocsp {
namespace {

namespace fs = std::filesystem;
using ::onepass::testing::RunCommand;
using ::onepass::testing::ScrapeValue;
using ::onepass::testing::ServerProcess;
using ::onepass::testing::WaitFor;

constexpr int kWorkers = 2;
constexpr int kCycles = 20;

void Publish(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".tmp";
  std::ofstream(temp, std::ios::binary) << bytes;
  fs::rename(temp, path);
}

// One descriptor table as /proc shows it: number -> what it is ("socket:[123]",
// "/memfd:crl (deleted)", "anon_inode:[eventfd]", ...).
using FdTable = std::map<int, std::string>;

FdTable ReadTable(const std::string& fd_dir) {
  FdTable table;
  std::error_code error;
  for (fs::directory_iterator it(fd_dir, error); !error && it != fs::directory_iterator();
       it.increment(error)) {
    int fd = -1;
    if (!absl::SimpleAtoi(it->path().filename().string(), &fd)) continue;
    std::error_code link_error;
    const fs::path target = fs::read_symlink(it->path(), link_error);
    if (!link_error) table[fd] = target.string();
  }
  return table;
}

int CountMemfds(const FdTable& table) {
  int count = 0;
  for (const auto& [fd, target] : table) count += absl::StartsWith(target, "/memfd:") ? 1 : 0;
  return count;
}

FdTable WithoutMemfds(FdTable table) {
  std::erase_if(table, [](const auto& entry) { return absl::StartsWith(entry.second, "/memfd:"); });
  return table;
}

// The worker threads' tables: those of the process's threads whose table is not the leader's.
std::map<int, FdTable> WorkerTables(pid_t pid) {
  const FdTable leader = ReadTable(absl::StrCat("/proc/", pid, "/fd"));
  std::map<int, FdTable> workers;
  std::error_code error;
  for (fs::directory_iterator it(absl::StrCat("/proc/", pid, "/task"), error);
       !error && it != fs::directory_iterator(); it.increment(error)) {
    int tid = -1;
    if (!absl::SimpleAtoi(it->path().filename().string(), &tid)) continue;
    FdTable table = ReadTable(it->path().string() + "/fd");
    if (WithoutMemfds(table) != WithoutMemfds(leader)) workers[tid] = std::move(table);
  }
  return workers;
}

// Sockets listening on `port` (LISTEN, state 0A, in /proc/net/tcp), as `ss -tln` counts them.
int ListenersOn(int port) {
  std::ifstream file("/proc/net/tcp");
  std::string line;
  std::getline(file, line);  // the header
  int listening = 0;
  const std::string local_port = absl::StrCat(":", absl::Hex(port, absl::kZeroPad4));
  while (std::getline(file, line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() < 4) continue;
    if (absl::EndsWith(absl::AsciiStrToUpper(fields[1]), absl::AsciiStrToUpper(local_port)) &&
        fields[3] == "0A") {
      ++listening;
    }
  }
  return listening;
}

// A download that reads `first` bytes of the response, then stops reading until Finish.
class PartialDownload {
 public:
  PartialDownload(int port, size_t first) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    const int small = 64 * 1024;  // so that the server's sends wait for this reader
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) return;
    const std::string request = "GET /crl/ca.crl HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return;
    }
    connected_ = true;
    Read(first, absl::Seconds(20));
  }
  ~PartialDownload() {
    if (fd_ >= 0) close(fd_);
  }
  bool connected() const { return connected_; }
  size_t received() const { return response_.size(); }

  // Reads to the end; the body (after the head).
  std::string Finish() {
    Read(SIZE_MAX, absl::Seconds(30));
    const size_t body = response_.find("\r\n\r\n");
    return body == std::string::npos ? "" : response_.substr(body + 4);
  }

 private:
  void Read(size_t until, absl::Duration bound) {
    const absl::Time deadline = absl::Now() + bound;
    char buffer[65536];
    while (response_.size() < until && absl::Now() < deadline) {
      pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
      if (poll(&ready, 1, 100) <= 0) continue;
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) return;
      response_.append(buffer, static_cast<size_t>(n));
    }
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string response_;
};

class CrlReloadDescriptorsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(CrlReloadDescriptorsTest, DownloadsAcrossReloadsLeaveEveryTableAsItWas) {
  const std::string io = GetParam();
  const std::string dir = ::testing::TempDir() + "/crl_fds_" + io + "_" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir + "/crl");
  const absl::StatusOr<::onepass::testing::CommandResult> data = RunCommand(
      {ONEPASS_SOURCE_DIR "/scripts/make-ocsp-testdata.sh", dir + "/data"}, absl::Seconds(60));
  ASSERT_TRUE(data.ok() && data->exit_code == 0);
  testing::TestCrlIssuer ca("onepass descriptor CA");
  const absl::Time now = absl::Now();
  // Two versions, alternated: each goes by sendfile from the snapshot's sealed file (above the
  // 16 KiB that go with the head), and is large enough that a reader that stops after a third
  // of it keeps its connection waiting to write, holding the snapshot, whatever the kernel's
  // send buffer takes.
  const std::string versions[2] = {
      ca.MakeCrl(now - absl::Hours(1), now + absl::Hours(24), 250000),
      ca.MakeCrl(now - absl::Minutes(30), now + absl::Hours(24), 250001)};
  ASSERT_GT(versions[0].size(), size_t{5} << 20);
  Publish(dir + "/crl/ca.crl", versions[0]);
  std::ofstream(dir + "/issuers.pem") << ca.CertificatePem();
  const std::string metrics = absl::StrCat("127.0.0.1:", ::onepass::testing::FreeLoopbackPort());
  auto started = ServerProcess::Start(
      {"--handler", "ocsp", "--listen", "127.0.0.1:0", "--workers", std::to_string(kWorkers),
       "--io", io, "--private-fd-tables", "--ocsp-responses", dir + "/data/responses",
       // The downloads stall across each reload (up to seconds on a busy machine): not cut.
       "--write-timeout-ms", "60000", "--crl-dir", dir + "/crl", "--crl-issuers",
       dir + "/issuers.pem", "--metrics-listen", metrics});
  ASSERT_TRUE(started.ok()) << started.status();
  std::unique_ptr<ServerProcess> server = *std::move(started);
  const int port = server->port();
  ASSERT_EQ(ListenersOn(port), kWorkers);

  const std::map<int, FdTable> at_start = WorkerTables(server->pid());
  ASSERT_EQ(at_start.size(), static_cast<size_t>(kWorkers)) << "workers with a table of their own";
  for (const auto& [tid, table] : at_start) {
    // The startup CRL's file is the process's: a worker reopens it for itself when it sends.
    EXPECT_EQ(CountMemfds(table), 0) << "worker " << tid << " kept a copy of the data's file";
  }

  for (int cycle = 1; cycle <= kCycles; ++cycle) {
    SCOPED_TRACE(absl::StrCat("cycle ", cycle));
    const std::string& old_crl = versions[(cycle - 1) % 2];
    // Several downloads, so that each worker has some (the kernel spreads them by hash).
    std::vector<std::unique_ptr<PartialDownload>> downloads;
    for (int i = 0; i < 2 * kWorkers; ++i) {
      downloads.push_back(std::make_unique<PartialDownload>(port, old_crl.size() / 3));
      ASSERT_TRUE(downloads.back()->connected());
      ASSERT_GE(downloads.back()->received(), old_crl.size() / 3);
    }
    Publish(dir + "/crl/ca.crl", versions[cycle % 2]);
    ASSERT_EQ(kill(server->pid(), SIGHUP), 0);
    ASSERT_TRUE(WaitFor([&] { return ScrapeValue(metrics, "onepass_reloads_total") >= cycle; },
                        absl::Seconds(20)));
    for (auto& download : downloads) EXPECT_TRUE(download->Finish() == old_crl);
    downloads.clear();
    ASSERT_EQ(ListenersOn(port), kWorkers) << "a worker's listener was closed";
  }

  // Once the last reader of each old snapshot is gone: the leader holds the current CRL's
  // file only, the workers none (theirs go on the next heartbeat), and every other descriptor
  // of a worker is the one it had at start.
  EXPECT_TRUE(WaitFor(
      [&] {
        if (CountMemfds(ReadTable(absl::StrCat("/proc/", server->pid(), "/fd"))) != 1) {
          return false;
        }
        for (const auto& [tid, table] : WorkerTables(server->pid())) {
          if (CountMemfds(table) != 0) return false;
        }
        return true;
      },
      absl::Seconds(10)))
      << "sealed files left over";
  const std::map<int, FdTable> at_end = WorkerTables(server->pid());
  ASSERT_EQ(at_end.size(), at_start.size());
  for (const auto& [tid, table] : at_start) {
    ASSERT_TRUE(at_end.count(tid));
    EXPECT_EQ(WithoutMemfds(at_end.at(tid)), WithoutMemfds(table)) << "worker " << tid;
  }
  // Served after all that, the newest version.
  PartialDownload last(port, 0);
  ASSERT_TRUE(last.connected());
  EXPECT_TRUE(last.Finish() == versions[kCycles % 2]);
  EXPECT_EQ(server->Stop(), 0) << server->ReadStderr();
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(BothDrivers, CrlReloadDescriptorsTest,
                         ::testing::Values("epoll", "uring"));

}  // namespace
}  // namespace onepass::ocsp
