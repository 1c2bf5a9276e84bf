#include "server/listener.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/core/socket_options.h"

namespace onepass {
namespace {

absl::Status BindError(const SocketAddress& address, int error) {
  std::string what =
      absl::StrCat("cannot listen on ", address.ToString(), ": ", std::strerror(error));
  switch (error) {
    case EADDRINUSE:
      return absl::FailedPreconditionError(
          absl::StrCat(what, "; stop the program using that port or pick another --listen"));
    case EACCES:
      return absl::PermissionDeniedError(
          absl::StrCat(what, "; ports below 1024 need root or CAP_NET_BIND_SERVICE (see deploy/)"));
    case EADDRNOTAVAIL:
      return absl::InvalidArgumentError(
          absl::StrCat(what, "; that address is not on this machine (ip addr)"));
    default:
      return absl::InternalError(what);
  }
}

absl::StatusOr<ScopedFd> OpenOne(const SocketAddress& address, int backlog) {
  ScopedFd fd(socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  }
  absl::Status options = SetListenerOptions(fd.get(), address.family());
  if (!options.ok()) return options;
  if (bind(fd.get(), address.get(), address.length) != 0) return BindError(address, errno);
  // For TCP the socket joins its reuseport group (and gets its index) here.
  if (listen(fd.get(), backlog) != 0) return BindError(address, errno);
  return fd;
}

// SO_REUSEPORT lets every socket of the same user join the port's group, so a second onepassd
// started by mistake would silently take a share of the connections. A probe bound without
// SO_REUSEPORT fails with EADDRINUSE while any listener holds the port (SO_REUSEADDR still
// lets it bind over TIME-WAIT sockets left by an earlier run), which turns that mistake into
// the usual startup error. The probe never listens and is closed at once.
absl::Status ProbePortIsFree(const SocketAddress& address) {
  ScopedFd probe(socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) return absl::OkStatus();  // the real bind reports socket errors
  int one = 1;
  setsockopt(probe.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (address.family() == AF_INET6) {
    setsockopt(probe.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  if (bind(probe.get(), address.get(), address.length) != 0 && errno == EADDRINUSE) {
    return BindError(address, EADDRINUSE);
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<sock_filter> BuildCpuSteeringProgram(absl::Span<const int> worker_cpus) {
  const uint32_t workers = static_cast<uint32_t>(worker_cpus.size());
  std::vector<sock_filter> program;
  program.push_back(
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_CPU)));
  bool identity = true;
  for (uint32_t i = 0; i < workers; ++i) identity &= worker_cpus[i] == static_cast<int>(i);
  if (identity) {
    program.push_back(BPF_STMT(BPF_RET | BPF_A, 0));
    return program;
  }
  for (uint32_t i = 0; i < workers; ++i) {
    // Equal: fall through to "ret #i"; otherwise skip it to the next comparison.
    program.push_back(
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(worker_cpus[i]), 0, 1));
    program.push_back(BPF_STMT(BPF_RET | BPF_K, i));
  }
  program.push_back(BPF_STMT(BPF_RET | BPF_K, workers));  // no worker here: kernel hash
  return program;
}

absl::StatusOr<ListenerSet> OpenListeners(absl::Span<const SocketAddress> addresses, int workers,
                                          int backlog, absl::Span<const int> steering_cpus) {
  ListenerSet set;
  set.by_worker.resize(workers);
  const std::vector<sock_filter> program = BuildCpuSteeringProgram(steering_cpus);
  for (const SocketAddress& requested : addresses) {
    SocketAddress address = requested;
    if (address.port() != 0) {
      absl::Status free = ProbePortIsFree(address);
      if (!free.ok()) return free;
    }
    for (int w = 0; w < workers; ++w) {
      absl::StatusOr<ScopedFd> fd = OpenOne(address, backlog);
      if (!fd.ok()) return fd.status();
      if (w == 0 && address.port() == 0) {
        absl::StatusOr<SocketAddress> local = LocalAddress(fd->get());
        if (!local.ok()) return local.status();
        address.set_port(local->port());
      }
      set.by_worker[w].push_back(*std::move(fd));
    }
    if (!steering_cpus.empty()) {
      // The program belongs to the group; attaching through any member sets it for all.
      absl::Status attached = AttachReuseportProgram(set.by_worker[0].back().get(), program);
      if (!attached.ok()) return attached;
    }
    set.bound.push_back(address);
  }
  return set;
}

absl::StatusOr<ListenerSet> AdoptListeners(absl::Span<const SocketAddress> addresses, int workers,
                                           std::vector<std::vector<ScopedFd>> by_worker) {
  if (static_cast<int>(by_worker.size()) != workers) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the running server has ", by_worker.size(), " workers, this one would have ", workers,
        "; restart with the same --workers/--cpus (or stop the running one first)"));
  }
  ListenerSet set;
  for (size_t a = 0; a < addresses.size(); ++a) {
    for (int w = 0; w < workers; ++w) {
      if (by_worker[w].size() != addresses.size()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the running server listens on ", by_worker[w].size(), " addresses, this one on ",
            addresses.size(), "; restart with the same --listen"));
      }
      absl::StatusOr<SocketAddress> local = LocalAddress(by_worker[w][a].get());
      if (!local.ok()) return local.status();
      if (local->family() != addresses[a].family() ||
          (addresses[a].port() != 0 && local->port() != addresses[a].port())) {
        return absl::FailedPreconditionError(absl::StrCat(
            "the running server listens on ", local->ToString(), " where this one asks for ",
            addresses[a].ToString(), "; restart with the same --listen"));
      }
      // A server of an earlier version may not have set it; setting it again is harmless.
      absl::Status nodelay = SetListenerNoDelay(by_worker[w][a].get());
      if (!nodelay.ok()) return nodelay;
      if (w == 0) set.bound.push_back(*local);
    }
  }
  set.by_worker = std::move(by_worker);
  return set;
}

}  // namespace onepass
