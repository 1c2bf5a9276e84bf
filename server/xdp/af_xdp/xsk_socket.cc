#include "server/xdp/af_xdp/xsk_socket.h"

#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace onepass::xdp {
namespace {

bool PowerOfTwo(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

absl::StatusOr<std::unique_ptr<XskSocket>> XskSocket::Open(const XskConfig& config) {
  if (!PowerOfTwo(config.ring_size) || !PowerOfTwo(config.frame_size) || config.frame_size < 2048) {
    return absl::InvalidArgumentError(
        "AF_XDP ring_size and frame_size must be powers of two, frame_size at least 2048");
  }
  if (if_nametoindex(config.ifname.c_str()) == 0) {
    return absl::NotFoundError(
        absl::StrCat("no interface ", config.ifname, " in this network namespace (ip link show)"));
  }
  std::unique_ptr<XskSocket> self(new XskSocket(config));
  if (absl::Status status = self->Init(); !status.ok()) return status;
  return self;
}

absl::Status XskSocket::Init() {
  const uint32_t frames = config_.ring_size * 2;
  area_bytes_ = static_cast<size_t>(frames) * config_.frame_size;
  // MAP_POPULATE: every page touched now, none faulted in on the data path.
  void* area = mmap(nullptr, area_bytes_, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (area == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("mapping ", area_bytes_, " bytes of AF_XDP UMEM: ", std::strerror(errno)));
  }
  area_ = area;

  xsk_umem_config umem_config{};
  umem_config.fill_size = config_.ring_size;
  umem_config.comp_size = config_.ring_size;
  umem_config.frame_size = config_.frame_size;
  umem_config.frame_headroom = 0;
  if (int err = xsk_umem__create(&umem_, area_, area_bytes_, &fill_, &completion_, &umem_config);
      err != 0) {
    umem_ = nullptr;
    return absl::InternalError(absl::StrCat(
        "creating the AF_XDP UMEM: ", std::strerror(-err),
        err == -EPERM ? " (needs root, or CAP_NET_RAW and a locked-memory limit to match)" : ""));
  }

  xsk_socket_config socket_config{};
  socket_config.rx_size = config_.ring_size;
  socket_config.tx_size = config_.ring_size;
  // XdpProgram loads the program and registers the socket; libxdp must not load its own.
  socket_config.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
  socket_config.bind_flags = XDP_USE_NEED_WAKEUP;
  if (int err = xsk_socket__create(&xsk_, config_.ifname.c_str(), config_.queue, umem_, &rx_, &tx_,
                                   &socket_config);
      err != 0) {
    xsk_ = nullptr;
    std::string hint;
    if (err == -EINVAL) {
      hint = absl::StrCat(": is ", config_.queue, " an rx queue of ", config_.ifname,
                          "? (ethtool -l ", config_.ifname, ")");
    } else if (err == -EBUSY) {
      hint = ": another AF_XDP socket is bound to that queue";
    }
    const std::string message =
        absl::StrCat("binding an AF_XDP socket to ", config_.ifname, " queue ", config_.queue, ": ",
                     std::strerror(-err), hint);
    // EBUSY can pass: a socket closed a moment ago releases its queue after its close returns
    // (the kernel's deferred teardown), which a hand-over's new process may meet.
    return err == -EBUSY ? absl::UnavailableError(message) : absl::InternalError(message);
  }
  xdp_options options{};
  socklen_t length = sizeof(options);
  if (getsockopt(fd(), SOL_XDP, XDP_OPTIONS, &options, &length) == 0) {
    zero_copy_ = (options.flags & XDP_OPTIONS_ZEROCOPY) != 0;
  }

  tx_free_.reserve(config_.ring_size);
  for (uint32_t i = 0; i < config_.ring_size; ++i) {
    tx_free_.push_back(static_cast<uint64_t>(i) * config_.frame_size);
  }
  uint32_t index = 0;
  if (xsk_ring_prod__reserve(&fill_, config_.ring_size, &index) != config_.ring_size) {
    return absl::InternalError("the AF_XDP fill ring is smaller than asked");
  }
  for (uint32_t i = 0; i < config_.ring_size; ++i) {
    *xsk_ring_prod__fill_addr(&fill_, index + i) =
        static_cast<uint64_t>(config_.ring_size + i) * config_.frame_size;
  }
  xsk_ring_prod__submit(&fill_, config_.ring_size);
  return absl::OkStatus();
}

XskSocket::~XskSocket() {
  if (xsk_ != nullptr) xsk_socket__delete(xsk_);
  if (umem_ != nullptr) xsk_umem__delete(umem_);
  if (area_ != nullptr) munmap(area_, area_bytes_);
}

size_t XskSocket::Receive(std::span<XskFrame> out) {
  uint32_t index = 0;
  const uint32_t n = xsk_ring_cons__peek(&rx_, static_cast<uint32_t>(out.size()), &index);
  if (n == 0) {
    // A zero-copy driver may wait for a wakeup before it uses the fill ring again; the caller's
    // poll(2) gives it one too, this covers a busy loop without poll.
    if (xsk_ring_prod__needs_wakeup(&fill_)) {
      recvfrom(fd(), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
    }
    return 0;
  }
  auto* base = static_cast<uint8_t*>(area_);
  for (uint32_t i = 0; i < n; ++i) {
    const xdp_desc* desc = xsk_ring_cons__rx_desc(&rx_, index + i);
    out[i].addr = desc->addr;
    out[i].bytes = {base + xsk_umem__add_offset_to_addr(desc->addr), desc->len};
  }
  xsk_ring_cons__release(&rx_, n);
  return n;
}

void XskSocket::Release(std::span<const XskFrame> frames) {
  if (frames.empty()) return;
  uint32_t index = 0;
  // Never short: the fill ring holds every rx frame (see the header).
  const uint32_t n = xsk_ring_prod__reserve(&fill_, static_cast<uint32_t>(frames.size()), &index);
  for (uint32_t i = 0; i < n; ++i) {
    // The frame's start: in aligned mode the kernel only wants an address inside the chunk.
    *xsk_ring_prod__fill_addr(&fill_, index + i) =
        xsk_umem__extract_addr(frames[i].addr) & ~static_cast<uint64_t>(config_.frame_size - 1);
  }
  xsk_ring_prod__submit(&fill_, n);
}

bool XskSocket::Send(std::span<const uint8_t> frame) {
  if (frame.size() > config_.frame_size) {
    ++stats_.tx_too_large;
    return false;
  }
  if (tx_free_.empty()) ReapCompletions();
  uint32_t index = 0;
  if (tx_free_.empty() || xsk_ring_prod__reserve(&tx_, 1, &index) != 1) {
    ++stats_.tx_no_frame;
    return false;
  }
  const uint64_t addr = tx_free_.back();
  tx_free_.pop_back();
  std::memcpy(static_cast<uint8_t*>(area_) + addr, frame.data(), frame.size());
  xdp_desc* desc = xsk_ring_prod__tx_desc(&tx_, index);
  desc->addr = addr;
  desc->len = static_cast<uint32_t>(frame.size());
  desc->options = 0;
  xsk_ring_prod__submit(&tx_, 1);
  ++stats_.tx_frames;
  return true;
}

void XskSocket::Flush() {
  ReapCompletions();
  // Frames not yet completed may still sit in the tx ring: the copy-mode kernel sends at most
  // a batch per sendto and answers EAGAIN for the rest, so kick while any is outstanding.
  if (tx_free_.size() < config_.ring_size && xsk_ring_prod__needs_wakeup(&tx_)) {
    if (sendto(fd(), nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 && errno != EAGAIN &&
        errno != EBUSY && errno != ENOBUFS) {
      ++stats_.kick_errors;
    }
    ReapCompletions();
  }
}

void XskSocket::ReapCompletions() {
  uint32_t index = 0;
  const uint32_t n = xsk_ring_cons__peek(&completion_, config_.ring_size, &index);
  for (uint32_t i = 0; i < n; ++i) {
    tx_free_.push_back(xsk_umem__extract_addr(*xsk_ring_cons__comp_addr(&completion_, index + i)));
  }
  xsk_ring_cons__release(&completion_, n);
}

}  // namespace onepass::xdp
