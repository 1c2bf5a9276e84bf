// Fuzz target (issue 39): any bytes through the TLS 1.3 HandshakeReader, the first byte choosing
// the fragment size; the oracle is split invariance (same messages as the whole input).
// The ClientHello parser and ChooseParameters join here when they land.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "server/tls/tls13/wire/handshake_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t step = size_t{data[0]} + 1;
  const std::span<const uint8_t> input(data + 1, size - 1);
  onepass::tls::tls13::HandshakeReader whole_reader(4096), split_reader(4096);
  std::vector<onepass::tls::tls13::HandshakeMessage> whole, split;
  const bool whole_ok =
      whole_reader.Feed(input, whole) == onepass::tls::tls13::HandshakeReader::Result::kOk;
  bool split_ok = true;
  for (size_t pos = 0; pos < input.size() && split_ok; pos += step) {
    const size_t n = std::min(step, input.size() - pos);
    split_ok = split_reader.Feed(input.subspan(pos, n), split) ==
               onepass::tls::tls13::HandshakeReader::Result::kOk;
  }
  if (whole_ok != split_ok) std::abort();
  if (whole_ok && split.size() != whole.size()) std::abort();
  for (size_t i = 0; whole_ok && i < whole.size(); ++i) {
    if (whole[i].type != split[i].type || whole[i].body != split[i].body) std::abort();
  }
  return 0;
}
