#include "server/restart/successor.h"

#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/scoped_fd.h"

extern char** environ;

namespace onepass {

std::vector<std::string> SuccessorCommand(int argc, char** argv) {
  std::vector<std::string> command;
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  command.push_back(n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string(argv[0]));
  // An upgraded binary replaces the file: the link then ends in " (deleted)"; the path stays.
  constexpr char kDeleted[] = " (deleted)";
  if (command[0].size() > sizeof(kDeleted) - 1 &&
      command[0].compare(command[0].size() - (sizeof(kDeleted) - 1), std::string::npos, kDeleted) ==
          0) {
    command[0].resize(command[0].size() - (sizeof(kDeleted) - 1));
  }
  for (int i = 1; i < argc; ++i) command.emplace_back(argv[i]);
  return command;
}

absl::Status SpawnSuccessor(const std::vector<std::string>& command) {
  std::vector<char*> args;
  for (const std::string& arg : command) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  // The child starts with no signal blocked, as from a shell: it blocks what it takes by
  // sigwait itself. Our mask would keep SIGTERM from killing it while it loads its data.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], nullptr, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    return absl::InternalError(absl::StrCat("cannot start ", command[0], ": ", std::strerror(rc)));
  }
  LogInfo("SIGUSR2: started %s (pid %d) to take over", command[0], pid);
  return absl::OkStatus();
}

void NotifyServiceManagerOfMainPid() {
  const char* socket_path = std::getenv("NOTIFY_SOCKET");
  if (socket_path == nullptr || socket_path[0] == '\0') return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const size_t length = std::strlen(socket_path);
  if (length >= sizeof(address.sun_path)) return;
  std::memcpy(address.sun_path, socket_path, length);
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';  // abstract namespace
  ScopedFd fd(socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  const std::string message = absl::StrCat("MAINPID=", getpid(), "\nREADY=1");
  if (sendto(fd.get(), message.data(), message.size(), MSG_NOSIGNAL,
             reinterpret_cast<const sockaddr*>(&address),
             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length)) < 0) {
    LogWarning("cannot tell systemd our pid (NOTIFY_SOCKET %s: %s); set NotifyAccess=all",
               socket_path, std::strerror(errno));
  }
}

}  // namespace onepass
