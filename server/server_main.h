// The whole of a server program: flags, startup checks, signals, the "listening on"/"ready"
// and "stats" lines. onepassd (server/main.cc) runs it with the protocol registry; tests run
// it with a test protocol (tests/support/line_server_main.cc), so the process lifecycle is
// tested without any real protocol.
//
// Contract with tests/support/server_process.cc and the load tester: once every listener is
// bound it prints to stdout one line "listening on ADDR:PORT" per --listen (the real port when
// 0 was asked), then "ready"; on SIGTERM/SIGINT it drains, prints "stats accepted=N served=N
// ..." and exits 0. SIGUSR1 logs the current counters to stderr. A startup error prints one
// line to stderr saying what to do, and exits 1.
#ifndef ONEPASS_SERVER_SERVER_MAIN_H_
#define ONEPASS_SERVER_SERVER_MAIN_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "handlers/handler.h"

namespace onepass {

// Builds the factory for --handler NAME (handlers/registry.h: NewHandlerFactory).
using HandlerFactoryMaker =
    std::function<absl::StatusOr<std::unique_ptr<HandlerFactory>>(absl::string_view name)>;

// The defaults --handler NAME asks of the server (handlers/registry.h: ProtocolDefaultsFor).
using ProtocolDefaultsMaker = std::function<ProtocolDefaults(absl::string_view name)>;

// Parses the flags, runs the server until SIGTERM/SIGINT, returns the exit code.
int ServerMain(int argc, char** argv, const HandlerFactoryMaker& make_factory,
               const ProtocolDefaultsMaker& defaults_of);

}  // namespace onepass

#endif  // ONEPASS_SERVER_SERVER_MAIN_H_
