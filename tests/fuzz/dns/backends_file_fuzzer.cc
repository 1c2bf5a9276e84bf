// Any bytes as a --dns-backends-file: the parser either returns at most max_backends distinct
// backends with a port, or an error naming the file; never a crash. A file of the backends it
// returned, one per line, parses to the same list (what it accepts, it prints back).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "handlers/dns/backends_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr size_t kMax = 4;
  absl::StatusOr<std::vector<onepass::SocketAddress>> parsed =
      onepass::dns::ParseBackendsFile(text, "fuzz.conf", kMax);
  if (!parsed.ok()) {
    if (parsed.status().message().find("fuzz.conf") == absl::string_view::npos) std::abort();
    return 0;
  }
  if (parsed->empty() || parsed->size() > kMax) std::abort();
  std::set<std::string> names;
  std::string printed;
  for (const onepass::SocketAddress& backend : *parsed) {
    if (backend.port() < 1 || !names.insert(backend.ToString()).second) std::abort();
    printed += backend.ToString() + "\n";
  }
  absl::StatusOr<std::vector<onepass::SocketAddress>> again =
      onepass::dns::ParseBackendsFile(printed, "printed.conf", kMax);
  if (!again.ok() || again->size() != parsed->size()) std::abort();
  for (size_t i = 0; i < again->size(); ++i) {
    if ((*again)[i].ToString() != (*parsed)[i].ToString()) std::abort();
  }
  return 0;
}
