// onepassd: serves one protocol (--handler) over TCP on every --listen address, with one pinned
// worker per CPU. See docs/design.md for the path of a connection, and
// server/server_main.h for the command line and output contract.
#include "handlers/registry.h"
#include "server/server_main.h"

int main(int argc, char** argv) {
  return onepass::ServerMain(
      argc, argv, [](absl::string_view name) { return onepass::NewHandlerFactory(name); },
      [](absl::string_view name) { return onepass::ProtocolDefaultsFor(name); });
}
