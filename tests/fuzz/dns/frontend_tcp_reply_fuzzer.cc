// Fuzz target: what a DNS backend sends back on a TCP connection of the frontend's pool, any
// bytes. The server's frame reader (server/upstream/upstream_frame_reader.h) cuts them with the DNS
// framer (dns::FrameLength), whole and at a split point drawn from the input: the frames must
// be the same (split invariance) and each within its bounds. Each frame then goes to a
// FrontendHandler with queries in flight and retried over TCP, with the ID of one of them
// written in, so that matching, the question check, the cache and the ID restore all run.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "handlers/dns/dns_framer.h"
#include "handlers/dns/dns_wire.h"
#include "handlers/dns/frontend_counters.h"
#include "handlers/dns/frontend_handler.h"
#include "server/upstream/upstream_frame_reader.h"

namespace {

using onepass::UpstreamFrameReader;

constexpr size_t kMaxFrame = 2 + 65535;

// The frames of `input` fed in two pieces cut at `split`; stops at the first invalid one.
std::vector<std::string> Frames(absl::Span<const uint8_t> input, size_t split, bool& invalid) {
  UpstreamFrameReader reader(&onepass::dns::FrameLength, kMaxFrame);
  std::vector<std::string> frames;
  invalid = false;
  size_t at = 0;
  for (size_t end : {split, input.size()}) {
    while (at < end && !invalid) {
      const absl::Span<uint8_t> tail = reader.WritableTail();
      if (tail.empty()) std::abort();
      const size_t n = std::min(tail.size(), end - at);
      std::memcpy(tail.data(), input.data() + at, n);
      reader.Commit(n);
      at += n;
      absl::Span<const uint8_t> frame;
      UpstreamFrameReader::Status status;
      while ((status = reader.Next(frame)) == UpstreamFrameReader::Status::kFrame) {
        if (frame.size() < 2 + onepass::dns::kHeaderBytes || frame.size() > kMaxFrame) {
          std::abort();
        }
        frames.emplace_back(frame.begin(), frame.end());
      }
      invalid = status == UpstreamFrameReader::Status::kInvalid;
    }
  }
  return frames;
}

// A query for www.example.com A with `id` (a DNS message, no prefix).
std::vector<uint8_t> Query(uint16_t id) {
  std::vector<uint8_t> query = {
      static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 1, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  for (const char* label : {"www", "example", "com"}) {
    query.push_back(static_cast<uint8_t>(std::strlen(label)));
    query.insert(query.end(), label, label + std::strlen(label));
  }
  query.insert(query.end(), {0, 0, 1, 0, 1});
  return query;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onepass;
  const absl::Span<const uint8_t> input(data, size);
  bool invalid_whole = false;
  const std::vector<std::string> whole = Frames(input, 0, invalid_whole);
  const size_t split = size == 0 ? 0 : (size_t{data[0]} * 257 + size) % (size + 1);
  bool invalid_split = false;
  if (Frames(input, split, invalid_split) != whole || invalid_split != invalid_whole) {
    std::abort();
  }

  // Three queries forwarded, each answered TC=1 over UDP, so each waits for TCP. One handler
  // for the whole run (its 65536-entry ID table per backend is costly to build per input);
  // each input starts 10 s after the last, and everything still in flight expires first.
  static HandlerCounters counters(dns::FrontendCounterCount(1));
  static dns::FrontendHandler& handler = *[] {
    dns::FrontendConfig config;
    config.backends.push_back(*ParseSocketAddress("192.0.2.1:53"));  // length 0: vacant
    // Cached answers live less than the 10 s between inputs: each input forwards again.
    config.cache.max_ttl = 5;
    config.cache.max_negative_ttl = 5;
    return new dns::FrontendHandler(config, counters);
  }();
  static absl::Time now = absl::FromUnixSeconds(1'000'000);
  now += absl::Seconds(10);
  static UpstreamQueue queue;
  static OutputBuffer out(1 << 18);
  out.Clear();
  UpstreamAnswer expired;
  while (handler.TakeExpired(now, out, expired, queue)) out.Clear();
  queue.Clear();
  RequestContext context;
  context.now = now;
  context.upstream = &queue;
  std::vector<uint16_t> ids;
  for (uint16_t client = 0; client < 3; ++client) {
    const std::vector<uint8_t> query = Query(client);
    std::vector<uint8_t> framed = {0, static_cast<uint8_t>(query.size())};
    framed.insert(framed.end(), query.begin(), query.end());
    context.connection = client + 1;
    handler.Process(framed, context, out);
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    std::vector<uint8_t> truncated(queue.bytes(i).begin(), queue.bytes(i).end());
    truncated[2] |= 0x82;
    OutputBuffer retry(1 << 18);
    if (!handler.TakeUpstreamReply(0, truncated, context.now, retry).resend_over_stream) {
      std::abort();
    }
    ids.push_back(dns::ReadU16(truncated.data()));
  }
  for (size_t i = 0; i < whole.size(); ++i) {
    std::string frame = whole[i];
    if (i % 2 == 0 && !ids.empty()) {  // one in two carries an ID in flight
      const uint16_t id = ids[i / 2 % ids.size()];
      frame[2] = static_cast<char>(id >> 8);
      frame[3] = static_cast<char>(id);
    }
    OutputBuffer answer(1 << 18);
    const UpstreamAnswer result = handler.TakeUpstreamStreamReply(
        0, {reinterpret_cast<const uint8_t*>(frame.data()), frame.size()}, context.now, answer);
    if (result.matched && (answer.size() != frame.size() || result.connection == 0)) std::abort();
  }
  return 0;
}
