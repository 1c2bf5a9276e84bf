// Fuzz target: the frame parser and builder of server/xdp/tcp/ (packet.h) on any bytes. Checks:
// the view lies inside the frame, and a parsed segment rebuilt by BuildFrame parses back to the
// same fields. (The endpoint fuzzer, frames plus timer ticks, comes with tcp_endpoint.)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "server/xdp/tcp/packet.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onepass::xdp;
  SegmentView v;
  if (ParseFrame({data, size}, &v) != ParseResult::kOk) return 0;
  if (v.payload.data() < data || v.payload.data() + v.payload.size() > data + size) std::abort();
  SegmentOut s;
  s.seq = v.seq;
  s.ack = v.ack;
  s.flags = v.flags;
  s.window = v.window;
  s.options = v.options;
  s.payload = v.payload;
  std::vector<uint8_t> out(kMaxHeaderBytes + v.payload.size());
  size_t n = BuildFrame(v.path, s, 0, out);
  if (n == 0) return 0;  // an IPv4 frame too long to rebuild with our options
  SegmentView w;
  if (ParseFrame({out.data(), n}, &w) != ParseResult::kOk) std::abort();
  if (w.seq != v.seq || w.ack != v.ack || w.flags != v.flags ||
      w.payload.size() != v.payload.size() || w.path.key.peer != v.path.key.local ||
      w.path.key.peer_port != v.path.key.local_port) {
    std::abort();
  }
  return 0;
}
