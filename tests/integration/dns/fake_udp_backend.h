// A UDP "backend" inside a test, for the frontend's failure cases: it counts the datagrams it
// receives and, while `answering`, echoes each as its answer (the query with QR set, no
// records; with `a_record_ttl` > 0 one A record 127.0.0.1 with that TTL, for A queries: an
// answer the frontend caches), after `delay` (changeable: `delay_ms`). Silent (a dead
// backend) until told to answer. Or, given an OnQuery, it does what that says with each query
// instead (record it, hold it, drop it, answer it with TC=1 or a forged ID).
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_FAKE_UDP_BACKEND_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_FAKE_UDP_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"

namespace onepass::dns::testing {

class FakeUdpBackend {
 public:
  // Called on the backend's thread with each query (a datagram of 12 bytes or more) and the
  // port it came from on 127.0.0.1, in place of the echo; it answers, if at all, by SendFrom.
  using OnQuery =
      std::function<void(FakeUdpBackend& backend, uint16_t from_port, absl::Span<const uint8_t>)>;

  // On a free port of 127.0.0.1; answers (when answering) `delay` after each query.
  explicit FakeUdpBackend(absl::Duration delay = absl::ZeroDuration());
  // On a free port of 127.0.0.1; `on_query` decides about each query (`answering` unused).
  explicit FakeUdpBackend(OnQuery on_query);
  ~FakeUdpBackend();  // stops within 50 ms
  FakeUdpBackend(const FakeUdpBackend&) = delete;
  FakeUdpBackend& operator=(const FakeUdpBackend&) = delete;

  int port() const { return port_; }  // 0 when the socket could not be bound

  // The echo answer to `query`: QR set, with the A record when a_record_ttl > 0.
  std::vector<uint8_t> Echo(absl::Span<const uint8_t> query) const;
  // Sends `datagram` from the backend's own address and port to 127.0.0.1:`port`, from any
  // thread: exactly what an off-path attacker spoofing the backend's address delivers. True
  // when sent whole.
  bool SendFrom(uint16_t port, absl::Span<const uint8_t> datagram);

  std::atomic<bool> answering{false};
  std::atomic<int> received{0};
  std::atomic<int> delay_ms{0};
  std::atomic<uint32_t> a_record_ttl{0};

 private:
  void Bind();
  void Serve();

  int fd_ = -1;
  int port_ = 0;
  OnQuery on_query_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_FAKE_UDP_BACKEND_H_
