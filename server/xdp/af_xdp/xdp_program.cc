#include "server/xdp/af_xdp/xdp_program.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <net/if.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "server/xdp/af_xdp/bpffs.h"
#include "server/xdp/af_xdp/xdp_steer_object.h"

namespace onepass::xdp {
namespace {

std::string XdpError(long err) {
  char text[256];
  libxdp_strerror(static_cast<int>(err), text, sizeof(text));
  return text;
}

// The status for a failed attach, with what to do about it.
absl::Status AttachError(const std::string& ifname, XdpMode mode, long err) {
  const std::string what = absl::StrCat("attaching the XDP program to ", ifname, " in ",
                                        XdpModeName(mode), " mode: ", XdpError(err));
  if (err == -EPERM || err == -EACCES) {
    return absl::PermissionDeniedError(absl::StrCat(
        what,
        "; loading XDP programs needs root (CAP_NET_ADMIN, CAP_BPF and CAP_SYS_ADMIN or "
        "CAP_PERFMON): run as root or grant those capabilities"));
  }
  if (err == -EOPNOTSUPP || err == -EINVAL) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, "; the driver of ", ifname,
                     " has no XDP in this mode: allow generic mode, or use "
                     "another interface (ethtool -i ",
                     ifname, " names the driver)"));
  }
  if (err == -EEXIST || err == -EBUSY) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, "; another XDP program that is not libxdp's dispatcher holds ", ifname,
        " (xdp-loader status ", ifname, "; ip link set dev ", ifname, " xdp off removes it)"));
  }
  return absl::InternalError(what);
}

// The program in the embedded object, ready to attach. `*object` is the object it borrows.
absl::StatusOr<xdp_program*> OpenProgram(bpf_object** object) {
  const std::span<const uint8_t> bytes = XdpSteerObject();
  DECLARE_LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = kXdpSteerProgramName);
  bpf_object* obj = bpf_object__open_mem(bytes.data(), bytes.size(), &open_opts);
  if (obj == nullptr || libbpf_get_error(obj) != 0) {
    return absl::InternalError("the embedded XDP object does not open (a broken build?)");
  }
  DECLARE_LIBXDP_OPTS(xdp_program_opts, opts, .obj = obj, .prog_name = kXdpSteerProgramName);
  xdp_program* program = xdp_program__create(&opts);
  if (const long err = libxdp_get_error(program); err != 0 || program == nullptr) {
    bpf_object__close(obj);
    return absl::InternalError(
        absl::StrCat("libxdp rejects the embedded XDP program: ", XdpError(err)));
  }
  *object = obj;
  return program;
}

// libbpf's and libxdp's warnings as ours, one line each; their info and debug chatter (every
// ELF section they skip) dropped.
int LogLibraryMessage(const char* library, const char* format, va_list args) {
  char line[512];
  const int n = std::vsnprintf(line, sizeof(line), format, args);
  if (n <= 0) return n;
  std::string_view text(line, std::min<size_t>(static_cast<size_t>(n), sizeof(line) - 1));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  // libbpf starts its lines with "libbpf: "; libxdp does not say who it is.
  if (text.rfind(library, 0) == 0) {
    LogWarning("%s", text);
  } else {
    LogWarning("%s: %s", library, text);
  }
  return n;
}
int LogLibbpf(libbpf_print_level level, const char* format, va_list args) {
  return level == LIBBPF_WARN ? LogLibraryMessage("libbpf", format, args) : 0;
}
int LogLibxdp(libxdp_print_level level, const char* format, va_list args) {
  return level == LIBXDP_WARN ? LogLibraryMessage("libxdp", format, args) : 0;
}

bool IsOurs(const xdp_program* program) {
  const char* name = xdp_program__name(program);
  return name != nullptr && std::string_view(name) == kXdpSteerProgramName;
}

// Our programs on the interface, found by name; the multiprog is closed by the caller.
struct Found {
  xdp_multiprog* mp = nullptr;
  xdp_program* ours = nullptr;  // the first copy, or the legacy main program when ours
  int count = 0;
};

absl::StatusOr<Found> FindOurs(int ifindex) {
  Found found;
  xdp_multiprog* mp = xdp_multiprog__get_from_ifindex(ifindex);
  if (const long err = libxdp_get_error(mp); err != 0 || mp == nullptr) {
    if (err == -ENOENT || err == 0) return found;  // no XDP program at all
    return absl::InternalError(
        absl::StrCat("reading the XDP programs of ifindex ", ifindex, ": ", XdpError(err)));
  }
  found.mp = mp;
  if (xdp_multiprog__is_legacy(mp)) {
    xdp_program* main = xdp_multiprog__main_prog(mp);
    if (main != nullptr && IsOurs(main)) found = {mp, main, 1};
    return found;
  }
  for (xdp_program* p = xdp_multiprog__next_prog(nullptr, mp); p != nullptr;
       p = xdp_multiprog__next_prog(p, mp)) {
    if (!IsOurs(p)) continue;
    if (found.ours == nullptr) found.ours = p;
    ++found.count;
  }
  return found;
}

}  // namespace

const char* XdpModeName(XdpMode mode) { return mode == XdpMode::kNative ? "native" : "generic"; }

std::string DescribeMode(const XdpProgram& program) {
  return absl::StrCat(program.mode_name(), " mode, ",
                      program.via_dispatcher() ? "through libxdp's dispatcher"
                                               : "alone (without libxdp's dispatcher)");
}

absl::StatusOr<int> CountXdpSteer(int ifindex) {
  absl::StatusOr<Found> found = FindOurs(ifindex);
  if (!found.ok()) return found.status();
  xdp_multiprog__close(found->mp);
  return found->count;
}

absl::StatusOr<int> RemoveStaleXdpSteer(int ifindex) {
  // One copy per pass: detaching rebuilds the dispatcher, so the list read before is stale.
  for (int removed = 0; removed < 64; ++removed) {
    absl::StatusOr<Found> found = FindOurs(ifindex);
    if (!found.ok()) return found.status();
    if (found->ours == nullptr) {
      xdp_multiprog__close(found->mp);
      return removed;
    }
    const xdp_attach_mode mode = xdp_multiprog__attach_mode(found->mp);
    const int err = xdp_multiprog__is_legacy(found->mp)
                        ? xdp_multiprog__detach(found->mp)
                        : xdp_program__detach(found->ours, ifindex, mode, 0);
    xdp_multiprog__close(found->mp);
    if (err != 0) {
      return absl::InternalError(absl::StrCat("removing a stale copy of ", kXdpSteerProgramName,
                                              " from ifindex ", ifindex, ": ", XdpError(err)));
    }
  }
  return absl::InternalError("stale copies of the XDP program keep appearing");
}

absl::StatusOr<std::unique_ptr<XdpProgram>> XdpProgram::Attach(const XdpProgramConfig& config) {
  static std::once_flag log_once;
  std::call_once(log_once, [] {
    libbpf_set_print(LogLibbpf);
    libxdp_set_print(LogLibxdp);
  });
  const int ifindex = static_cast<int>(if_nametoindex(config.ifname.c_str()));
  if (ifindex == 0) {
    return absl::NotFoundError(
        absl::StrCat("no interface ", config.ifname, " in this network namespace (ip link show)"));
  }
  if (geteuid() != 0) {
    LogWarning("not running as root: attaching XDP needs CAP_NET_ADMIN and CAP_BPF");
  }
  // libxdp's dispatcher pins in bpffs; without one (and unable to mount it) the program can
  // still run, alone on the interface: libxdp's documented switch says so.
  bool via_dispatcher = true;
  if (absl::Status bpffs = EnsureBpffsMounted(); !bpffs.ok()) {
    LogWarning("%s; attaching %s without libxdp's dispatcher, as the only XDP program on %s",
               bpffs.message(), kXdpSteerProgramName, config.ifname);
    setenv("LIBXDP_SKIP_DISPATCHER", "1", 1);
    via_dispatcher = false;
  }
  absl::StatusOr<int> stale = RemoveStaleXdpSteer(ifindex);
  if (!stale.ok()) return stale.status();
  if (*stale > 0) {
    LogWarning("removed %d stale copy(ies) of %s from %s, left by a process that did not detach",
               *stale, kXdpSteerProgramName, config.ifname);
  }

  std::vector<XdpMode> modes;
  if (config.mode != XdpModePreference::kGenericOnly) modes.push_back(XdpMode::kNative);
  if (config.mode != XdpModePreference::kNativeOnly) modes.push_back(XdpMode::kGeneric);
  std::unique_ptr<XdpProgram> self(new XdpProgram());
  self->ifname_ = config.ifname;
  self->ifindex_ = ifindex;
  self->via_dispatcher_ = via_dispatcher;
  absl::Status last;
  for (XdpMode mode : modes) {
    // A fresh program per try: a failed attach may leave the first one half loaded.
    absl::StatusOr<xdp_program*> program = OpenProgram(&self->object_);
    if (!program.ok()) return program.status();
    const int err = xdp_program__attach(
        *program, ifindex, mode == XdpMode::kNative ? XDP_MODE_NATIVE : XDP_MODE_SKB, 0);
    if (err == 0) {
      self->program_ = *program;
      self->mode_ = mode;
      break;
    }
    xdp_program__close(*program);
    bpf_object__close(std::exchange(self->object_, nullptr));
    last = AttachError(config.ifname, mode, err);
    if (err == -EPERM || err == -EACCES) return last;
    if (mode == XdpMode::kNative && modes.size() > 1) {
      LogWarning("%s; trying generic mode (slower, AF_XDP sockets copy)", last.message());
    }
  }
  if (self->program_ == nullptr) return last;

  bpf_object* obj = xdp_program__bpf_obj(self->program_);
  const int ports_fd = bpf_object__find_map_fd_by_name(obj, "ports");
  self->xsks_map_fd_ = bpf_object__find_map_fd_by_name(obj, "xsks");
  self->kernel_flows_map_fd_ = bpf_object__find_map_fd_by_name(obj, "kernel_flows_until");
  self->draining_map_fd_ = bpf_object__find_map_fd_by_name(obj, "draining");
  if (ports_fd < 0 || self->xsks_map_fd_ < 0 || self->kernel_flows_map_fd_ < 0 ||
      self->draining_map_fd_ < 0) {
    return absl::InternalError(
        "the XDP program's maps 'ports', 'xsks', 'kernel_flows_until' and 'draining' are missing");
  }
  bpf_map_info xsks_info{};
  uint32_t info_size = sizeof(xsks_info);
  if (bpf_obj_get_info_by_fd(self->xsks_map_fd_, &xsks_info, &info_size) != 0) {
    return absl::InternalError(
        absl::StrCat("reading the XDP program's 'xsks' map: ", std::strerror(errno)));
  }
  self->xsks_map_id_ = xsks_info.id;
  // Before any AF_XDP socket is registered (until then every frame passes to the kernel), so
  // that no segment of a kernel connection reaches our TCP.
  if (config.kernel_flows_grace > absl::ZeroDuration()) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);  // bpf_ktime_get_ns's clock
    const uint32_t zero = 0;
    const uint64_t until =
        static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(now.tv_nsec) +
        static_cast<uint64_t>(absl::ToInt64Nanoseconds(config.kernel_flows_grace));
    if (bpf_map_update_elem(self->kernel_flows_map_fd_, &zero, &until, BPF_ANY) != 0) {
      return absl::InternalError(
          absl::StrCat("setting the XDP program's kernel_flows_until map: ", std::strerror(errno)));
    }
  }
  for (uint16_t port : config.ports) {
    const uint8_t on = 1;
    if (bpf_map_update_elem(ports_fd, &port, &on, BPF_ANY) != 0) {
      return absl::InternalError(absl::StrCat(
          "adding port ", port, " to the XDP program's ports map: ", std::strerror(errno),
          " (at most 64 ports)"));
    }
  }
  // libxdp falls back to attaching the program alone when its dispatcher cannot run: no
  // bpffs, or a kernel that refuses freplace programs (EPERM even for root on some VMs).
  if (absl::StatusOr<Found> found = FindOurs(ifindex); found.ok()) {
    if (found->mp != nullptr && xdp_multiprog__is_legacy(found->mp)) self->via_dispatcher_ = false;
    xdp_multiprog__close(found->mp);
  }
  if (via_dispatcher && !self->via_dispatcher_) {
    LogWarning(
        "libxdp could not use its dispatcher on %s (it warns why the first time it checks; "
        "often a kernel that refuses freplace programs): %s runs alone there, and other XDP "
        "programs cannot be attached beside it",
        config.ifname, kXdpSteerProgramName);
  }
  // Success is the caller's to say, once (onepassd's start-up report: DescribeMode).
  return self;
}

XdpProgram::~XdpProgram() {
  if (absl::Status status = Detach(); !status.ok()) LogError("%s", status.message());
}

absl::Status XdpProgram::SetSocket(uint32_t queue, int xsk_fd) const {
  return SetSocketIn(xsks_map_fd_, queue, xsk_fd);
}

absl::Status XdpProgram::SetSocketFromOwnTable(uint32_t queue, int xsk_fd) const {
  const int map_fd = bpf_map_get_fd_by_id(xsks_map_id_);
  if (map_fd < 0) {
    return absl::InternalError(absl::StrCat("opening the AF_XDP socket map of ", ifname_,
                                            " by its id: ", std::strerror(errno)));
  }
  absl::Status set = SetSocketIn(map_fd, queue, xsk_fd);
  close(map_fd);
  return set;
}

absl::Status XdpProgram::SetSocketIn(int map_fd, uint32_t queue, int xsk_fd) const {
  if (bpf_map_update_elem(map_fd, &queue, &xsk_fd, BPF_ANY) != 0) {
    return absl::InternalError(absl::StrCat("registering the AF_XDP socket of ", ifname_, " queue ",
                                            queue, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status XdpProgram::EndKernelFlowsGrace() const {
  if (kernel_flows_map_fd_ < 0) return absl::OkStatus();
  // A drain needs the lookups until the detach (BeginDrain); the caller serializes the two.
  if (absl::StatusOr<bool> draining = Draining(); !draining.ok() || *draining) {
    return draining.status();
  }
  const uint32_t zero = 0;
  const uint64_t off = 0;  // the program's "never set": no lookups
  if (bpf_map_update_elem(kernel_flows_map_fd_, &zero, &off, BPF_ANY) != 0) {
    return absl::InternalError(absl::StrCat("ending the XDP program's grace period on ", ifname_,
                                            ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status XdpProgram::BeginDrain() const {
  if (draining_map_fd_ < 0) return absl::OkStatus();  // detached
  const uint32_t zero = 0;
  const uint64_t forever = UINT64_MAX;  // until the detach
  const uint32_t on = 1;
  // The lookups first: a SYN passed to the kernel makes a kernel connection whose next
  // segment must find them on.
  if (bpf_map_update_elem(kernel_flows_map_fd_, &zero, &forever, BPF_ANY) != 0 ||
      bpf_map_update_elem(draining_map_fd_, &zero, &on, BPF_ANY) != 0) {
    return absl::InternalError(absl::StrCat("starting the XDP program's drain on ", ifname_, ": ",
                                            std::strerror(errno),
                                            " (new connections keep coming to this process)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> XdpProgram::Draining() const {
  if (draining_map_fd_ < 0) return false;
  const uint32_t zero = 0;
  uint32_t on = 0;
  if (bpf_map_lookup_elem(draining_map_fd_, &zero, &on) != 0) {
    return absl::InternalError(absl::StrCat("reading the XDP program's drain flag on ", ifname_,
                                            ": ", std::strerror(errno)));
  }
  return on != 0;
}

absl::StatusOr<uint64_t> XdpProgram::KernelFlowsGraceEnd() const {
  if (kernel_flows_map_fd_ < 0) return 0;
  const uint32_t zero = 0;
  uint64_t until = 0;
  if (bpf_map_lookup_elem(kernel_flows_map_fd_, &zero, &until) != 0) {
    return absl::InternalError(absl::StrCat("reading the XDP program's grace period on ", ifname_,
                                            ": ", std::strerror(errno)));
  }
  return until;
}

absl::Status XdpProgram::Detach() {
  if (program_ == nullptr) return absl::OkStatus();
  const int err = xdp_program__detach(
      program_, ifindex_, mode_ == XdpMode::kNative ? XDP_MODE_NATIVE : XDP_MODE_SKB, 0);
  xdp_program__close(std::exchange(program_, nullptr));
  bpf_object__close(std::exchange(object_, nullptr));
  xsks_map_fd_ = -1;
  kernel_flows_map_fd_ = -1;
  draining_map_fd_ = -1;
  // ENOENT: the interface went away, and its programs with it.
  if (err != 0 && err != -ENOENT && err != -ENODEV) {
    return absl::InternalError(absl::StrCat("detaching the XDP program from ", ifname_, ": ",
                                            XdpError(err), " (xdp-loader unload ", ifname_,
                                            " --all removes it)"));
  }
  return absl::OkStatus();
}

}  // namespace onepass::xdp
