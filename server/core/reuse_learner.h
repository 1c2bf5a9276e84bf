// Which clients reuse their connections, learned per worker, so that keepalive (RFC 7766
// §6.2.3) costs nothing for the clients that never use it.
//
// With --keepalive-ms, a connection stays open after its answers for the client's next request:
// a client that sends it after reading an answer (dnsperf -m tcp, a stub keeping its
// connection) then loses nothing, where the single pass would close under it. But most clients
// of a short-connection service send one request and close (resolvers, kdig, dig), and for them
// the wait costs an epoll registration, a wake-up for their FIN and a recv of it: 1.34x the
// single pass's CPU per connection on this project's loopback benchmark
// (loadtest/results/2026-12-01-e26b547-keepalive-cost.md).
//
// So each worker remembers, per client address, how its kept-open connections ended. A client
// that closed its last kOneShotAfter kept-open connections after one request gets the single
// pass (answer, close); one connection in kProbeEvery is still kept open, and one that carries
// a second request makes the client a reusing one again. A new or forgotten client gets
// keepalive: the safe side, it loses nothing.
//
// The table is direct-mapped (a client's slot is its hash; a collision replaces the older
// client, who then starts again as new): fixed memory, no allocation, one hash per accept.
// Thread-confined to its worker.
#ifndef ONEPASS_SERVER_CORE_REUSE_LEARNER_H_
#define ONEPASS_SERVER_CORE_REUSE_LEARNER_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace onepass {

class ReuseLearner {
 public:
  // Kept-open connections closed after one request that make a client one-shot.
  static constexpr uint8_t kOneShotAfter = 16;
  // One connection in this many of a one-shot client is kept open anyway: the client may have
  // changed (a tool run from a host that first sent single queries).
  static constexpr uint8_t kProbeEvery = 16;
  static constexpr size_t kDefaultEntries = 4096;

  // `entries`: clients remembered at once, rounded up to a power of two.
  explicit ReuseLearner(size_t entries = kDefaultEntries);

  // Whether a new connection from `address` (IPv4 as v4-mapped IPv6) stays open for a next
  // request after its answers.
  bool KeepOpen(const std::array<uint8_t, 16>& address);
  // A connection from `address` that was kept open has ended after `requests` requests (one
  // with at least two reused the connection).
  void Learn(const std::array<uint8_t, 16>& address, uint32_t requests);

 private:
  struct Entry {
    std::array<uint8_t, 16> address{};
    uint8_t one_shot_streak = 0;  // kept-open connections in a row closed after one request
    uint8_t since_probe = 0;
    bool used = false;
  };
  Entry& EntryOf(const std::array<uint8_t, 16>& address);

  std::vector<Entry> entries_;
  size_t mask_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_REUSE_LEARNER_H_
