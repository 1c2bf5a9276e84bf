// The XDP program of the AF_XDP path (xdp_steer.bpf.c, embedded in the binary) on one
// interface, through libxdp's dispatcher: other XDP programs on the interface keep running,
// ours at its priority (XDP_RUN_CONFIG). TCP to `ports` goes to the AF_XDP socket registered
// for the receiving rx queue (SetSocket); everything else passes to the kernel.
//
// Lifetime: Attach() loads and attaches; the destructor detaches, leaving the interface as it
// was. A process killed before that (SIGKILL) leaves its copy running: the next Attach on that
// interface removes it first (RemoveStaleXdpSteer), so one onepass serves an interface.
// Not thread-safe; called at startup and shutdown.
#ifndef ONEPASS_SERVER_XDP_AF_XDP_XDP_PROGRAM_H_
#define ONEPASS_SERVER_XDP_AF_XDP_XDP_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

struct bpf_object;
struct xdp_program;

namespace onepass::xdp {

// How the program runs: in the driver before any sk_buff (native), or after the kernel built
// one (generic: every driver, slower, and AF_XDP sockets copy).
enum class XdpMode { kNative, kGeneric };
const char* XdpModeName(XdpMode mode);  // "native", "generic"

enum class XdpModePreference {
  kNativeThenGeneric,  // native; generic when the driver has no native XDP
  kNativeOnly,
  kGenericOnly,
};

struct XdpProgramConfig {
  std::string ifname;
  std::vector<uint16_t> ports;  // TCP destination ports steered to AF_XDP sockets
  XdpModePreference mode = XdpModePreference::kNativeThenGeneric;
  // For this long after the attach, a segment other than a SYN whose 4-tuple the kernel has a
  // connection for (one accepted, or in its handshake, before the program came up) passes to
  // the kernel instead of our TCP, which would reset it: one socket lookup per such segment.
  // Zero: none.
  absl::Duration kernel_flows_grace = absl::ZeroDuration();
};

class XdpProgram {
 public:
  // Removes a stale copy of ours, mounts bpffs when needed (bpffs.h), loads and attaches the
  // program and fills its ports map. Errors name the cause and the remedy.
  static absl::StatusOr<std::unique_ptr<XdpProgram>> Attach(const XdpProgramConfig& config);
  ~XdpProgram();  // Detach()
  XdpProgram(const XdpProgram&) = delete;
  XdpProgram& operator=(const XdpProgram&) = delete;

  // Frames of `queue` go to the AF_XDP socket `xsk_fd` (XskSocket::fd()); until then they pass
  // to the kernel. The kernel removes the entry itself when that socket closes.
  absl::Status SetSocket(uint32_t queue, int xsk_fd) const;
  // The same from a thread with a descriptor table of its own (a worker's, --private-fd-tables,
  // where `xsk_fd` lives and our map's fd does not): the map is opened there by its id.
  absl::Status SetSocketFromOwnTable(uint32_t queue, int xsk_fd) const;

  // Ends the grace period of kernel_flows_grace now (the kernel connections it was for have
  // gone: kernel_connections.h): the program stops looking segments up among the kernel's
  // sockets. No-op after BeginDrain; a caller on another thread than BeginDrain's serializes
  // the two.
  absl::Status EndKernelFlowsGrace() const;
  // This process drains: from now on SYNs to our ports pass to the kernel (no new connection
  // comes to our TCP; in a restart the new process's listeners take them), and every other
  // segment is looked up among the kernel's sockets first (those connections are the kernel's),
  // until the detach. Idempotent.
  absl::Status BeginDrain() const;
  absl::StatusOr<bool> Draining() const;  // whether BeginDrain() ran
  // When the grace period ends, in CLOCK_MONOTONIC nanoseconds (the program's
  // bpf_ktime_get_ns); 0 when there is none or it was ended, UINT64_MAX after BeginDrain.
  absl::StatusOr<uint64_t> KernelFlowsGraceEnd() const;

  // Detaches from the interface; idempotent.
  absl::Status Detach();

  XdpMode mode() const { return mode_; }
  const char* mode_name() const { return XdpModeName(mode_); }
  // False when the program runs alone on the interface, without libxdp's dispatcher: no bpffs
  // (and none could be mounted), or a kernel that refuses the dispatcher's freplace programs.
  bool via_dispatcher() const { return via_dispatcher_; }

 private:
  XdpProgram() = default;
  // The xsks map entry of `queue`, through `map_fd` (ours, or one opened by the map's id).
  absl::Status SetSocketIn(int map_fd, uint32_t queue, int xsk_fd) const;

  std::string ifname_;
  int ifindex_ = 0;
  XdpMode mode_ = XdpMode::kNative;
  bool via_dispatcher_ = true;
  bpf_object* object_ = nullptr;  // owned; outlives program_ (from_bpf_obj borrows it)
  xdp_program* program_ = nullptr;
  int xsks_map_fd_ = -1;          // owned by object_
  int kernel_flows_map_fd_ = -1;  // owned by object_
  int draining_map_fd_ = -1;      // owned by object_
  uint32_t xsks_map_id_ = 0;
};

// "native mode, through libxdp's dispatcher" / "generic mode, alone (without libxdp's
// dispatcher)": the one wording of how a program runs (the start-up report, --check, tests).
std::string DescribeMode(const XdpProgram& program);

// Detaches every copy of our program (found by name, kXdpSteerProgramName) from the interface:
// those left by a killed process. Returns how many were removed.
absl::StatusOr<int> RemoveStaleXdpSteer(int ifindex);

// How many copies of our program run on the interface (0 when no XDP program at all).
absl::StatusOr<int> CountXdpSteer(int ifindex);

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_AF_XDP_XDP_PROGRAM_H_
