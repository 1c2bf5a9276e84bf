// onepass-line-server: the onepassd program (server/server_main.h) serving the test line
// protocol (line_handler.h), so end-to-end tests of the process (signals, drain, the stdout
// contract, startup errors) need no real protocol. --handler line.
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
        onepass::testing::LineProtocolOptions options;
        options.output_bytes = 8 << 20;  // room for "big N" answers that fill socket buffers
        return std::make_unique<onepass::testing::LineHandlerFactory>(options);
      });
}
