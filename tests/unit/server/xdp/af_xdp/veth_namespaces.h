// Two network namespaces joined by a veth pair, for tests of the AF_XDP path: the server side
// (where the XDP program and the AF_XDP socket go) and the client side (where a kernel TCP
// client runs). Made with ip(8); removed by the destructor, so a failing test leaves nothing.
// A run killed before that (a crash, ctest's timeout) leaves its namespaces; the next Create
// removes those of processes that no longer exist (their names carry the pid).
#ifndef ONEPASS_TESTS_UNIT_SERVER_XDP_AF_XDP_VETH_NAMESPACES_H_
#define ONEPASS_TESTS_UNIT_SERVER_XDP_AF_XDP_VETH_NAMESPACES_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace onepass::testing {

class VethNamespaces {
 public:
  static constexpr char kServerIf[] = "xs0";
  static constexpr char kClientIf[] = "xc0";
  static constexpr char kServerAddress[] = "10.201.0.1";
  static constexpr char kClientAddress[] = "10.201.0.2";
  static constexpr char kServerAddress6[] = "fd00:c9::1";
  static constexpr char kClientAddress6[] = "fd00:c9::2";
  static constexpr char kServerMac[] = "02:0a:c9:00:00:01";
  static constexpr char kClientMac[] = "02:0a:c9:00:00:02";

  // `queues`: rx and tx queues on each end (a veth delivers what its peer sent on tx queue k
  // to rx queue k, and a kernel client spreads its flows over its tx queues).
  static absl::StatusOr<std::unique_ptr<VethNamespaces>> Create(int queues = 1);
  ~VethNamespaces();
  VethNamespaces(const VethNamespaces&) = delete;
  VethNamespaces& operator=(const VethNamespaces&) = delete;

  const std::string& server_ns() const { return server_ns_; }
  const std::string& client_ns() const { return client_ns_; }
  // Open descriptors of the namespaces, for setns(2); valid for the object's life.
  int server_ns_fd() const { return server_fd_; }
  int client_ns_fd() const { return client_fd_; }

  // `ip -n <server_ns> -d link show dev xs0`: what the kernel says is attached.
  absl::StatusOr<std::string> ServerLinkDetails() const;

 private:
  VethNamespaces() = default;
  absl::Status Build(int queues);

  std::string server_ns_, client_ns_;
  int server_fd_ = -1, client_fd_ = -1;
};

// Moves the calling thread into a network namespace until destroyed, then back.
class ScopedNetns {
 public:
  explicit ScopedNetns(int ns_fd);
  ~ScopedNetns();
  bool ok() const { return ok_; }

 private:
  int original_fd_ = -1;
  bool ok_ = false;
};

}  // namespace onepass::testing

#endif  // ONEPASS_TESTS_UNIT_SERVER_XDP_AF_XDP_VETH_NAMESPACES_H_
