// onepass-line-server: the onepassd program (server/server_main.h) serving the test line
// protocol (line_handler.h), so end-to-end tests of the process (signals, drain, the stdout
// contract, startup errors) need no real protocol. --handler line; the environment variable
// ONEPASS_LINE_LOAD_FILE names a file each load reads (tests of a stuck reload).
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/server_main.h"
#include "tests/support/line_handler.h"

int main(int argc, char** argv) {
  return onepass::ServerMain(
      argc, argv,
      [](absl::string_view name) -> absl::StatusOr<std::unique_ptr<onepass::HandlerFactory>> {
        if (name != "line") {
          return absl::InvalidArgumentError(
              absl::StrCat("unknown --handler '", name, "'; this test server has only 'line'"));
        }
        // ONEPASS_LINE_LOAD_FILE: "load" this file with a plain blocking read, as a loader
        // without OpenDataFile's checks would; a FIFO there blocks the load (a stuck reload).
        if (const char* path = std::getenv("ONEPASS_LINE_LOAD_FILE"); path != nullptr) {
          std::ifstream file(path);
          std::string ignored((std::istreambuf_iterator<char>(file)),
                              std::istreambuf_iterator<char>());
        }
        onepass::testing::LineProtocolOptions options;
        options.output_bytes = 8 << 20;  // room for "big N" answers that fill socket buffers
        return std::make_unique<onepass::testing::LineHandlerFactory>(options);
      },
      // The line protocol keeps no connection by default and names no ALPN.
      [](absl::string_view) { return onepass::ProtocolDefaults(); });
}
