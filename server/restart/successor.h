// The binary upgrade under systemd: SIGUSR2 starts a successor, the program at the same path
// (now the new binary) with the same arguments, which takes the listening sockets over
// (--handover-socket, server/restart/listener_handover.h) and tells systemd that it is the
// service's main process now (sd_notify MAINPID=, NotifyAccess=all in
// deploy/systemd/onepass@.service), so that the old process's exit does not end the service
// (nginx's USR2 upgrade, by hand-over).
#ifndef ONEPASS_SERVER_RESTART_SUCCESSOR_H_
#define ONEPASS_SERVER_RESTART_SUCCESSOR_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace onepass {

// The path and arguments to start a successor with: /proc/self/exe's target as it was at start
// (the path the package manager replaces) and `argv`. Call at start, before any upgrade.
std::vector<std::string> SuccessorCommand(int argc, char** argv);

// Starts `command` (from SuccessorCommand) as a child that inherits stdout and stderr (logged
// with its pid).
absl::Status SpawnSuccessor(const std::vector<std::string>& command);

// Under systemd ($NOTIFY_SOCKET set): "MAINPID=<our pid>" and "READY=1". Without it: nothing.
void NotifyServiceManagerOfMainPid();

}  // namespace onepass

#endif  // ONEPASS_SERVER_RESTART_SUCCESSOR_H_
