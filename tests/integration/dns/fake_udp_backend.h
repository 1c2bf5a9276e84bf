// A UDP "backend" inside a test, for the frontend's failure cases: it counts the datagrams it
// receives and, while `answering`, echoes each as its answer (the query with QR set, no
// records; with `a_record_ttl` > 0 one A record 127.0.0.1 with that TTL, for A queries: an
// answer the frontend caches), after `delay` (changeable: `delay_ms`). Silent (a dead
// backend) until told to answer.
#ifndef ONEPASS_TESTS_INTEGRATION_DNS_FAKE_UDP_BACKEND_H_
#define ONEPASS_TESTS_INTEGRATION_DNS_FAKE_UDP_BACKEND_H_

#include <atomic>
#include <cstdint>
#include <thread>

#include "absl/time/time.h"

namespace onepass::dns::testing {

class FakeUdpBackend {
 public:
  // On a free port of 127.0.0.1; answers (when answering) `delay` after each query.
  explicit FakeUdpBackend(absl::Duration delay = absl::ZeroDuration());
  ~FakeUdpBackend();  // stops within 50 ms
  FakeUdpBackend(const FakeUdpBackend&) = delete;
  FakeUdpBackend& operator=(const FakeUdpBackend&) = delete;

  int port() const { return port_; }  // 0 when the socket could not be bound
  std::atomic<bool> answering{false};
  std::atomic<int> received{0};
  std::atomic<int> delay_ms{0};
  std::atomic<uint32_t> a_record_ttl{0};

 private:
  void Serve();

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace onepass::dns::testing

#endif  // ONEPASS_TESTS_INTEGRATION_DNS_FAKE_UDP_BACKEND_H_
