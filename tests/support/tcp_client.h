// A blocking TCP client for tests, where every call has a deadline: no test can hang on it.
#ifndef ONEPASS_TESTS_SUPPORT_TCP_CLIENT_H_
#define ONEPASS_TESTS_SUPPORT_TCP_CLIENT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace onepass::testing {

class TcpClient {
 public:
  // Connects to `host` (numeric IPv4 or IPv6, e.g. "127.0.0.1", "::1") on `port`, from
  // `source` (a numeric address of the same family, e.g. "127.0.0.2") when not empty.
  static absl::StatusOr<TcpClient> Connect(const std::string& host, int port,
                                           absl::Duration timeout = absl::Seconds(5),
                                           const std::string& source = "");
  TcpClient(TcpClient&& other) noexcept;
  TcpClient& operator=(TcpClient&& other) noexcept;
  ~TcpClient();

  absl::Status Send(absl::string_view bytes, absl::Duration timeout = absl::Seconds(5));
  // Reads through the next '\n' (included). Fails on timeout or when the peer closes first.
  absl::StatusOr<std::string> ReadLine(absl::Duration timeout = absl::Seconds(5));
  // Reads until the peer closes; fails on timeout. A reset counts as a close.
  absl::StatusOr<std::string> ReadUntilClose(absl::Duration timeout = absl::Seconds(5));
  // shutdown(SHUT_WR): tells the server no more requests come.
  void ShutdownWrite();
  int fd() const { return fd_; }

 private:
  explicit TcpClient(int fd) : fd_(fd) {}
  // Waits for `events` on the socket; false on timeout.
  bool Poll(short events, absl::Time deadline);

  int fd_ = -1;
  std::string buffered_;  // read past the last line returned
};

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_SUPPORT_TCP_CLIENT_H_
