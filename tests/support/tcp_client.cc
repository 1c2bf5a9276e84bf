#include "tests/support/tcp_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace onepass::testing {

absl::StatusOr<TcpClient> TcpClient::Connect(const std::string& host, int port,
                                             absl::Duration timeout, const std::string& source) {
  sockaddr_storage storage{};
  socklen_t length = 0;
  auto* sin = reinterpret_cast<sockaddr_in*>(&storage);
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&storage);
  if (inet_pton(AF_INET, host.c_str(), &sin->sin_addr) == 1) {
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    length = sizeof(*sin);
  } else if (inet_pton(AF_INET6, host.c_str(), &sin6->sin6_addr) == 1) {
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    length = sizeof(*sin6);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("not a numeric address: ", host));
  }
  int fd = socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  TcpClient client(fd);
  if (!source.empty()) {
    sockaddr_storage local{};
    auto* local4 = reinterpret_cast<sockaddr_in*>(&local);
    auto* local6 = reinterpret_cast<sockaddr_in6*>(&local);
    local.ss_family = storage.ss_family;
    const bool parsed = storage.ss_family == AF_INET
                            ? inet_pton(AF_INET, source.c_str(), &local4->sin_addr) == 1
                            : inet_pton(AF_INET6, source.c_str(), &local6->sin6_addr) == 1;
    if (!parsed || bind(fd, reinterpret_cast<sockaddr*>(&local), length) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("cannot bind the source ", source));
    }
  }
  if (connect(fd, reinterpret_cast<sockaddr*>(&storage), length) != 0) {
    if (errno != EINPROGRESS) {
      return absl::UnavailableError(absl::StrCat("connect: ", std::strerror(errno)));
    }
    if (!client.Poll(POLLOUT, absl::Now() + timeout)) {
      return absl::DeadlineExceededError("connect timed out");
    }
    int error = 0;
    socklen_t size = sizeof(error);
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
    if (error != 0) {
      return absl::UnavailableError(absl::StrCat("connect: ", std::strerror(error)));
    }
  }
  return client;
}

TcpClient::TcpClient(TcpClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffered_(std::move(other.buffered_)) {}

TcpClient& TcpClient::operator=(TcpClient&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    buffered_ = std::move(other.buffered_);
  }
  return *this;
}

TcpClient::~TcpClient() {
  if (fd_ >= 0) close(fd_);
}

bool TcpClient::Poll(short events, absl::Time deadline) {
  while (true) {
    const int64_t wait_ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (wait_ms < 0) return false;
    pollfd p = {fd_, events, 0};
    int ready = poll(&p, 1, static_cast<int>(wait_ms));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

absl::Status TcpClient::Send(absl::string_view bytes, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!bytes.empty()) {
    ssize_t sent = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent > 0) {
      bytes.remove_prefix(static_cast<size_t>(sent));
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!Poll(POLLOUT, deadline)) return absl::DeadlineExceededError("send timed out");
    } else {
      return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> TcpClient::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    size_t newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffered_.substr(0, newline + 1);
      buffered_.erase(0, newline + 1);
      return line;
    }
    char buf[4096];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      buffered_.append(buf, n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      return absl::UnavailableError(
          absl::StrCat("closed before a whole line; got '", buffered_, "'"));
    } else if (!Poll(POLLIN, deadline)) {
      return absl::DeadlineExceededError(absl::StrCat("no line; got '", buffered_, "'"));
    }
  }
}

absl::StatusOr<std::string> TcpClient::ReadUntilClose(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string text = std::exchange(buffered_, "");
  while (true) {
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n > 0) {
      text.append(buf, n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      return text;
    } else if (!Poll(POLLIN, deadline)) {
      return absl::DeadlineExceededError(absl::StrCat("still open; got '", text, "'"));
    }
  }
}

void TcpClient::ShutdownWrite() { shutdown(fd_, SHUT_WR); }

}  // namespace onepass::testing
