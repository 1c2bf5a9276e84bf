#include "tests/integration/dns/fake_udp_backend.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/time/clock.h"

namespace onepass::dns::testing {

namespace {

// `message` (a whole message, QR set) with one answer record after its question: its name, A
// 127.0.0.1 with `ttl`. Unchanged when the question cannot be walked.
std::vector<uint8_t> WithARecord(std::vector<uint8_t> message, uint32_t ttl) {
  size_t at = 12;
  while (at < message.size() && message[at] != 0) at += 1 + message[at];
  at += 1 + 4;  // the root label, QTYPE, QCLASS
  if (at > message.size()) return message;
  std::vector<uint8_t> record = {0xc0, 0x0c, 0, 1, 0, 1};  // the question's name; A, IN
  for (int shift = 24; shift >= 0; shift -= 8) record.push_back(static_cast<uint8_t>(ttl >> shift));
  record.insert(record.end(), {0, 4, 127, 0, 0, 1});  // RDLENGTH, 127.0.0.1
  message.insert(message.begin() + static_cast<ptrdiff_t>(at), record.begin(), record.end());
  message[7] = 1;  // ANCOUNT
  return message;
}

}  // namespace

FakeUdpBackend::FakeUdpBackend(absl::Duration delay)
    : delay_ms(static_cast<int>(absl::ToInt64Milliseconds(delay))) {
  Bind();
}

FakeUdpBackend::FakeUdpBackend(OnQuery on_query) : on_query_(std::move(on_query)) { Bind(); }

void FakeUdpBackend::Bind() {
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return;
  }
  port_ = ntohs(address.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

FakeUdpBackend::~FakeUdpBackend() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) close(fd_);
}

std::vector<uint8_t> FakeUdpBackend::Echo(absl::Span<const uint8_t> query) const {
  std::vector<uint8_t> answer(query.begin(), query.end());
  answer[2] |= 0x80;  // QR
  if (a_record_ttl > 0) answer = WithARecord(std::move(answer), a_record_ttl);
  return answer;
}

bool FakeUdpBackend::SendFrom(uint16_t port, absl::Span<const uint8_t> datagram) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(port);
  return sendto(fd_, datagram.data(), datagram.size(), 0, reinterpret_cast<sockaddr*>(&to),
                sizeof(to)) == static_cast<ssize_t>(datagram.size());
}

void FakeUdpBackend::Serve() {
  std::vector<uint8_t> buffer(65536);
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 50) != 1) continue;
    sockaddr_in from{};
    socklen_t from_length = sizeof(from);
    const ssize_t n = recvfrom(fd_, buffer.data(), buffer.size(), 0,
                               reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n < 12 || from.sin_family != AF_INET) continue;  // not a DNS header
    ++received;
    const absl::Span<const uint8_t> query(buffer.data(), static_cast<size_t>(n));
    if (on_query_) {
      on_query_(*this, ntohs(from.sin_port), query);
      continue;
    }
    if (!answering) continue;
    if (const int delay = delay_ms; delay > 0) absl::SleepFor(absl::Milliseconds(delay));
    SendFrom(ntohs(from.sin_port), Echo(query));
  }
}

}  // namespace onepass::dns::testing
