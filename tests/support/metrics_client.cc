#include "tests/support/metrics_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tests/support/subprocess.h"

extern char** environ;

namespace onepass::testing {

std::string HttpGet(const std::string& address, const std::string& path) {
  absl::StatusOr<CommandResult> result = RunCommand(
      {"curl", "-s", "-m", "5", "-w", "\n%{http_code}", absl::StrCat("http://", address, path)},
      absl::Seconds(10));
  if (!result.ok()) return "curl failed";
  return result->out;
}

double MetricValue(const std::string& exposition, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(exposition, '\n')) {
    if (absl::ConsumePrefix(&line, name) && absl::ConsumePrefix(&line, " ")) {
      return std::strtod(std::string(line).c_str(), nullptr);
    }
  }
  return -1;
}

double ScrapeValue(const std::string& address, const std::string& name) {
  const std::string text = HttpGet(address, "/metrics");
  if (!absl::EndsWith(text, "\n200")) return -1;
  return MetricValue(text, name);
}

pid_t Spawn(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<std::string> args = argv;
  std::vector<char*> cargs;
  for (std::string& arg : args) cargs.push_back(arg.data());
  cargs.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, cargs[0], &actions, nullptr, cargs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

void KillAndReap(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

}  // namespace onepass::testing
