#include "tests/integration/dns/loopback_daemon.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/integration/dns/dns_tcp_query.h"
#include "tests/support/loopback_port.h"

namespace onepass::dns::testing {
namespace {

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

absl::StatusOr<int> FreeLoopbackPort() {
  const int port = onepass::testing::FreeLoopbackPort();
  if (port < 0) return absl::InternalError("no free port on 127.0.0.1 (socket or bind failed)");
  return port;
}

absl::StatusOr<std::unique_ptr<LoopbackDaemon>> LoopbackDaemon::Start(
    const std::vector<std::string>& argv, const std::string& log_path, int port,
    const std::vector<uint8_t>& probe) {
  if (argv.empty()) return absl::InvalidArgumentError("no program");
  std::unique_ptr<LoopbackDaemon> daemon(new LoopbackDaemon());
  daemon->log_path_ = log_path;
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork");
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  daemon->pid_ = pid;
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (true) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      daemon->pid_ = -1;
      return absl::FailedPreconditionError(absl::StrCat(argv[0], " exited: ", daemon->Log()));
    }
    auto reply = ExchangeTcp(port, {probe}, absl::Seconds(1));
    if (reply.ok() && reply->size() == 1) break;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(argv[0], " did not answer within 15 s: ", daemon->Log()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return daemon;
}

LoopbackDaemon::~LoopbackDaemon() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  if (!WaitExit(pid_, absl::Seconds(5))) {
    kill(pid_, SIGKILL);
    WaitExit(pid_, absl::Seconds(5));
  }
}

std::string LoopbackDaemon::Log() const {
  std::ifstream in(log_path_);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace onepass::dns::testing
