// Fuzz target: TcpEndpoint (server/xdp/tcp/) fed any frames plus timer ticks. Input: records of
// [1 byte op][2 bytes length][frame]; op bit 0 set: a timer tick first, op >> 1 advancing
// time [x 50 ms], except op 0xfe: the drain begins (TcpEndpoint::BeginDrain) then. Frames that
// start with 0xff get a valid frame from a fixed client in front so handshakes happen. Checks:
// no crash, the table never over its bound, and nothing left once every deadline has passed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "server/xdp/tcp/tcp_endpoint.h"

namespace {

using namespace onepass::xdp;

class Handler : public TcpRequestHandler {
 public:
  // The first byte picks the verdict; an answer takes part of the request (the rest waits
  // for the next call, as a pipelined request would).
  Verdict OnRequest(const TcpRequest& request, std::vector<uint8_t>* out,
                    size_t* consumed) override {
    const std::span<const uint8_t> req = request.bytes;
    switch (req[0] % 4) {
      case 0:
        return Verdict::kNeedMore;
      case 1:
        out->assign(static_cast<size_t>(req.size()) * 300, 'x');
        *consumed = (req.size() + 1) / 2;
        return Verdict::kRespond;
      case 2:
        out->assign(req.size(), 'y');
        *consumed = req.size();
        return Verdict::kRespondThenClose;
      default:
        return Verdict::kClose;
    }
  }
};

struct Sink : TcpFrameSink {
  std::vector<uint8_t> last;
  void Send(std::span<const uint8_t> f) override { last.assign(f.begin(), f.end()); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TcpEndpointConfig config;
  config.ports = {53};
  config.table = {.max_connections = 3, .per_client_max = 2};
  config.request_bound = 512;
  // Keep-alive in one run of two (the first byte): both ways of closing.
  config.keepalive_ms = size > 0 && (data[0] & 0x80) ? 300 : 0;
  Handler handler;
  Sink sink;
  TcpEndpoint ep(config, &handler, &sink);
  uint64_t now = 0;
  size_t i = 0;
  while (i + 3 <= size) {
    uint8_t op = data[i];
    size_t len = (size_t{data[i + 1]} << 8) | data[i + 2];
    i += 3;
    if (len > size - i) len = size - i;
    if (op == 0xfe) {
      ep.BeginDrain(now);
    } else {
      now += static_cast<uint64_t>(op >> 1) * 50;
      if (op & 1) ep.OnTimer(now);
    }
    ep.OnFrame({data + i, len}, now);
    // Answer the endpoint's last frame by echoing it back mirrored: drives handshakes.
    if (len > 0 && data[i] == 0xff && !sink.last.empty()) {
      std::vector<uint8_t> echo = sink.last;
      ep.OnFrame(echo, now);
    }
    i += len;
    if (ep.connections() > config.table.max_connections) std::abort();
  }
  // Every connection ends by a deadline: a keep-alive's FIN, then retransmissions up to
  // max_retries, then a RST. A slot still held after that many would be a leak.
  for (uint32_t tick = 0; tick < config.max_retries + 4; ++tick) {
    now += 1'000'000;
    ep.OnTimer(now);
    if (ep.connections() > config.table.max_connections) std::abort();
  }
  if (ep.connections() != 0) std::abort();
  return 0;
}
