#include "server/restart/listener_handover.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace onepass {
namespace {

constexpr uint32_t kMagic = 0x4f504831;  // "OPH1"
constexpr int kConfirmTimeoutMs = 10000;
// SCM_MAX_FD is 253: one message per worker carries that worker's sockets.
constexpr size_t kMaxFdsPerMessage = 253;

struct Header {
  uint32_t magic = kMagic;
  uint32_t workers = 0;
  uint32_t addresses = 0;
};

absl::StatusOr<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(address.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("--handover-socket ", path,
                                                   ": give a path of 1 to ",
                                                   sizeof(address.sun_path) - 1, " bytes"));
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  return address;
}

// Waits up to `timeout_ms` for one message; the received bytes, or -1 (timeout, error, EOF: 0).
ssize_t ReceiveMessage(int fd, void* data, size_t size, int timeout_ms, std::vector<int>* fds) {
  pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, timeout_ms) != 1) return -1;
  iovec iov = {.iov_base = data, .iov_len = size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerMessage)];
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof(control);
  const ssize_t n = recvmsg(fd, &message, MSG_CMSG_CLOEXEC);
  if (n <= 0) return n;
  for (cmsghdr* c = CMSG_FIRSTHDR(&message); c != nullptr; c = CMSG_NXTHDR(&message, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int received;
      std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (fds != nullptr) {
        fds->push_back(received);
      } else {
        close(received);
      }
    }
  }
  return n;
}

bool SendMessage(int fd, const void* data, size_t size, const std::vector<int>& fds) {
  iovec iov = {.iov_base = const_cast<void*>(data), .iov_len = size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerMessage)];
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  if (!fds.empty()) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  return sendmsg(fd, &message, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

}  // namespace

absl::StatusOr<TakenListeners> TakeListeners(const std::string& path) {
  absl::StatusOr<sockaddr_un> address = UnixAddress(path);
  if (!address.ok()) return address.status();
  TakenListeners taken;
  taken.connection.Reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!taken.connection.valid()) {
    return absl::InternalError(absl::StrCat("socket(AF_UNIX): ", std::strerror(errno)));
  }
  if (connect(taken.connection.get(), reinterpret_cast<const sockaddr*>(&*address),
              sizeof(*address)) != 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) {
      return absl::NotFoundError(absl::StrCat("no server to take over at ", path));
    }
    return absl::UnavailableError(
        absl::StrCat("--handover-socket ", path, ": connect: ", std::strerror(errno)));
  }
  Header header;
  std::vector<int> none;
  if (ReceiveMessage(taken.connection.get(), &header, sizeof(header), kConfirmTimeoutMs, &none) !=
          static_cast<ssize_t>(sizeof(header)) ||
      header.magic != kMagic || header.workers == 0 || header.addresses == 0 ||
      header.addresses > kMaxFdsPerMessage) {
    for (int fd : none) close(fd);
    return absl::UnavailableError(absl::StrCat(
        "--handover-socket ", path, ": the running server sent no listening sockets; is it an ",
        "onepassd of this version?"));
  }
  for (uint32_t w = 0; w < header.workers; ++w) {
    std::vector<int> fds;
    uint32_t index = 0;
    const ssize_t n =
        ReceiveMessage(taken.connection.get(), &index, sizeof(index), kConfirmTimeoutMs, &fds);
    std::vector<ScopedFd> owned;
    for (int fd : fds) owned.emplace_back(fd);
    if (n != static_cast<ssize_t>(sizeof(index)) || index != w ||
        owned.size() != header.addresses) {
      return absl::UnavailableError(
          absl::StrCat("--handover-socket ", path, ": the hand-over of worker ", w, " broke off"));
    }
    taken.by_worker.push_back(std::move(owned));
  }
  return taken;
}

absl::Status ConfirmHandover(ScopedFd& connection) {
  const char ready = 'R';
  char bye = 0;
  if (!SendMessage(connection.get(), &ready, 1, {}) ||
      ReceiveMessage(connection.get(), &bye, 1, kConfirmTimeoutMs, nullptr) != 1 || bye != 'B') {
    return absl::UnavailableError(
        "the previous server did not confirm the hand-over; both may be accepting until it "
        "exits");
  }
  connection.Reset();
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<HandoverServer>> HandoverServer::Start(
    const std::string& path, ListenerFds listeners, std::function<void()> handed_over) {
  absl::StatusOr<sockaddr_un> address = UnixAddress(path);
  if (!address.ok()) return address.status();
  auto server = std::unique_ptr<HandoverServer>(new HandoverServer());
  server->path_ = path;
  server->listeners_ = std::move(listeners);
  server->handed_over_ = std::move(handed_over);
  server->listen_fd_.Reset(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
  if (!server->listen_fd_.valid()) {
    return absl::InternalError(absl::StrCat("socket(AF_UNIX): ", std::strerror(errno)));
  }
  // A socket file left by a process that is gone (TakeListeners found nobody there).
  unlink(path.c_str());
  if (bind(server->listen_fd_.get(), reinterpret_cast<const sockaddr*>(&*address),
           sizeof(*address)) != 0 ||
      listen(server->listen_fd_.get(), 4) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "--handover-socket ", path, ": ", std::strerror(errno),
        "; give a path in a directory onepassd may write (systemd: RuntimeDirectory=)"));
  }
  server->thread_ = std::thread([raw = server.get()] { raw->Run(); });
  return server;
}

HandoverServer::~HandoverServer() {
  stopping_ = true;
  // Wakes the thread from accept() or poll().
  if (listen_fd_.valid()) shutdown(listen_fd_.get(), SHUT_RDWR);
  if (thread_.joinable()) thread_.join();
  if (!released_) unlink(path_.c_str());
}

void HandoverServer::Run() {
  while (!stopping_) {
    ScopedFd connection(accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection.valid()) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down (stopping) or broken: no more hand-overs
    }
    if (stopping_) return;
    if (Serve(connection.get())) {
      // Release the path for the new process (nobody can connect to an unlinked socket), then
      // let it go on, then stop accepting.
      unlink(path_.c_str());
      released_ = true;
      const char bye = 'B';
      SendMessage(connection.get(), &bye, 1, {});
      LogInfo("handed the listening sockets over to a new process; draining");
      handed_over_();
      return;
    }
    LogWarning("a hand-over on %s broke off before the new process confirmed; still serving",
               path_);
  }
}

bool HandoverServer::Serve(int connection) {
  Header header;
  header.workers = static_cast<uint32_t>(listeners_.size());
  header.addresses = listeners_.empty() ? 0 : static_cast<uint32_t>(listeners_[0].size());
  if (!SendMessage(connection, &header, sizeof(header), {})) return false;
  for (uint32_t w = 0; w < listeners_.size(); ++w) {
    std::vector<int> fds;
    for (const ScopedFd& fd : listeners_[w]) fds.push_back(fd.get());
    if (!SendMessage(connection, &w, sizeof(w), fds)) return false;
  }
  char ready = 0;
  return ReceiveMessage(connection, &ready, 1, kConfirmTimeoutMs, nullptr) == 1 && ready == 'R';
}

}  // namespace onepass
