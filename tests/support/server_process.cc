#include "tests/support/server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "server/tls/tls_config.h"

extern char** environ;

namespace onepass::testing {

int StatValue(absl::string_view stdout_text, absl::string_view key) {
  for (absl::string_view line : absl::StrSplit(stdout_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "stats ")) continue;
    for (absl::string_view pair : absl::StrSplit(line, ' ')) {
      // The value follows the last '=': a handler counter's name holds one, as in
      // ocsp_responses{status="successful"}=3.
      const size_t equals = pair.rfind('=');
      if (equals == absl::string_view::npos) continue;
      int value = 0;
      if (pair.substr(0, equals) == key && absl::SimpleAtoi(pair.substr(equals + 1), &value)) {
        return value;
      }
    }
  }
  return -1;
}

namespace {

// The sum of the exit line's counters whose key starts with `prefix` ("tls_fallback{"), or -1
// when it has none.
int64_t StatSum(absl::string_view stdout_text, absl::string_view prefix) {
  int64_t sum = -1;
  for (absl::string_view line : absl::StrSplit(stdout_text, '\n')) {
    if (!absl::ConsumePrefix(&line, "stats ")) continue;
    for (absl::string_view pair : absl::StrSplit(line, ' ')) {
      const size_t equals = pair.rfind('=');
      int64_t value = 0;
      if (equals == absl::string_view::npos || !absl::StartsWith(pair, prefix) ||
          !absl::SimpleAtoi(pair.substr(equals + 1), &value)) {
        continue;
      }
      sum = (sum < 0 ? 0 : sum) + value;
    }
  }
  return sum;
}

// Whether `argv`'s server gets the onepass engine without asking for it (server/tls_flags.h):
// no --tls-engine (or -tls_engine=...) among the arguments, and ONEPASS_TLS_ENGINE unset, empty
// or onepass (the default engine, tls::kDefaultTlsEngine).
bool OnepassEngineWithoutTheFlag(const std::vector<std::string>& argv) {
  const char* variable = std::getenv("ONEPASS_TLS_ENGINE");
  const absl::string_view engine =
      variable != nullptr && *variable != '\0' ? variable : tls::kDefaultTlsEngine;
  if (engine != "onepass") return false;
  for (absl::string_view arg : argv) {
    if (!absl::ConsumePrefix(&arg, "-")) continue;
    absl::ConsumePrefix(&arg, "-");
    const absl::string_view name = arg.substr(0, arg.find('='));
    if (absl::StrReplaceAll(name, {{"-", "_"}}) == "tls_engine") return false;
  }
  return true;
}

}  // namespace

absl::Status CheckOnepassEngineServed(absl::string_view stdout_text) {
  const int64_t full = StatSum(stdout_text, "tls_handshakes_full=");
  const int64_t resumed = StatSum(stdout_text, "tls_handshakes_resumed=");
  const int64_t ours = StatSum(stdout_text, "tls_handshakes_engine{engine=\"onepass\"}=");
  if (full < 0 || resumed < 0 || ours < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the onepass engine (the default or ONEPASS_TLS_ENGINE): the exit line has no "
                     "TLS handshake counters (tls_handshakes_full, tls_handshakes_resumed, "
                     "tls_handshakes_engine{engine=\"onepass\"}), "
                     "so nothing shows the onepass engine served; stdout: ",
                     stdout_text));
  }
  const int64_t completed = full + resumed;
  if (completed == 0 || ours > 0) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "the onepass engine serves (the default or ONEPASS_TLS_ENGINE), but it served none of the ",
      completed, " completed handshakes (tls_handshakes_engine{engine=\"onepass\"}=0); stdout: ",
      stdout_text));
}

std::string OnepassdPath() {
#ifdef ONEPASSD_PATH
  return ONEPASSD_PATH;
#else
  return "onepassd";
#endif
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    const std::vector<std::string>& args, const std::string& binary,
    absl::Duration startup_timeout) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  // ONEPASS_TEST_ONEPASSD_ARGS (space-separated) is appended to the flags of onepassd and of
  // onepass-line-server (the same ServerMain): the same end-to-end tests run again with
  // --io=uring (tests/integration/CMakeLists.txt).
  if (const char* extra = std::getenv("ONEPASS_TEST_ONEPASSD_ARGS");
      extra != nullptr &&
      (binary == OnepassdPath() || absl::EndsWith(binary, "/onepass-line-server"))) {
    for (absl::string_view arg : absl::StrSplit(extra, ' ', absl::SkipEmpty())) {
      argv.emplace_back(arg);
    }
  }
  std::vector<char*> cargs;
  for (std::string& arg : argv) cargs.push_back(arg.data());
  cargs.push_back(nullptr);
  auto server = std::unique_ptr<ServerProcess>(new ServerProcess());
  int rc = posix_spawn(&server->pid_, binary.c_str(), &actions, nullptr, cargs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  server->stdout_fd_ = out_pipe[0];
  server->stderr_fd_ = err_pipe[0];
  fcntl(server->stderr_fd_, F_SETFL, O_NONBLOCK);
  if (rc != 0) {
    server->pid_ = -1;
    return absl::NotFoundError(absl::StrCat("cannot run ", binary, ": ", std::strerror(rc)));
  }

  std::string pending;
  absl::Time deadline = absl::Now() + startup_timeout;
  while (true) {
    int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (wait_ms <= 0) {
      return absl::DeadlineExceededError(absl::StrCat(
          "onepassd did not print 'ready' within ", absl::FormatDuration(startup_timeout),
          "; args: ", absl::StrJoin(args, " "), "; stderr: ", server->ReadStderr()));
    }
    pollfd fd = {server->stdout_fd_, POLLIN, 0};
    if (poll(&fd, 1, std::min(wait_ms, 100)) <= 0) continue;
    char buf[1024];
    ssize_t n = read(server->stdout_fd_, buf, sizeof(buf));
    if (n <= 0) {
      // Let a failing server finish writing its error before reading it.
      usleep(100 * 1000);
      return absl::FailedPreconditionError(
          absl::StrCat("onepassd exited before 'ready'; args: ", absl::StrJoin(args, " "),
                       "; stderr: ", server->ReadStderr()));
    }
    pending.append(buf, n);
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      if (line == "ready") {
        server->check_onepass_engine_ =
            !server->tls_addresses_.empty() && OnepassEngineWithoutTheFlag(argv);
        server->stdout_text_ = pending;  // anything printed after "ready"
        fcntl(server->stdout_fd_, F_SETFL, O_NONBLOCK);
        return server;
      }
      absl::string_view address = line;
      if (absl::ConsumePrefix(&address, "metrics on "))
        server->metrics_address_ = std::string(address);
      if (absl::ConsumePrefix(&address, "tls listening on ")) {
        server->tls_addresses_.emplace_back(address);
        const size_t colon = address.rfind(':');
        if (server->tls_addresses_.size() == 1 &&
            (colon == absl::string_view::npos ||
             !absl::SimpleAtoi(address.substr(colon + 1), &server->tls_port_))) {
          return absl::InternalError(absl::StrCat("cannot read a port from: ", line));
        }
      }
      if (absl::ConsumePrefix(&address, "listening on ")) {
        server->addresses_.emplace_back(address);
        if (server->addresses_.size() == 1) {
          size_t colon = address.rfind(':');
          if (colon == absl::string_view::npos ||
              !absl::SimpleAtoi(address.substr(colon + 1), &server->port_)) {
            return absl::InternalError(absl::StrCat("cannot read a port from: ", line));
          }
        }
      }
    }
  }
}

std::string ServerProcess::ReadStderr() {
  char buf[4096];
  ssize_t n;
  while (stderr_fd_ >= 0 && (n = read(stderr_fd_, buf, sizeof(buf))) > 0) {
    stderr_text_.append(buf, n);
  }
  return stderr_text_;
}

std::string ServerProcess::ReadStdout() {
  char buf[4096];
  ssize_t n;
  while (stdout_fd_ >= 0 && (n = read(stdout_fd_, buf, sizeof(buf))) > 0) {
    stdout_text_.append(buf, n);
  }
  return stdout_text_;
}

int ServerProcess::Stop(absl::Duration timeout) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  absl::Time deadline = absl::Now() + timeout;
  int status = 0;
  while (absl::Now() < deadline) {
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      if (check_onepass_engine_ && code == 0) {
        check_onepass_engine_ = false;
        if (absl::Status served = CheckOnepassEngineServed(ReadStdout()); !served.ok()) {
          ADD_FAILURE() << served.message();
        }
      }
      return code;
    }
    usleep(10 * 1000);
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && check_onepass_engine_) Stop();
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (stdout_fd_ >= 0) close(stdout_fd_);
  if (stderr_fd_ >= 0) close(stderr_fd_);
}

}  // namespace onepass::testing
