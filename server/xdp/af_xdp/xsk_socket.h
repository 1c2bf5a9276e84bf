// One AF_XDP socket bound to (interface, rx queue), with its UMEM: frames that the kernel fills
// with received packets and that we fill with packets to send, shared, no copies for receive.
// Frames are allocated once at Open; nothing is allocated per packet.
//
// The UMEM is split in two: the first `ring_size` frames are for tx (a free stack), the others
// are for rx (in the fill ring, the rx ring, or held by the caller between Receive and Release).
// The fill ring is as large as the rx half, so giving frames back never fails.
//
// Thread-confined: one worker owns a socket. The XDP program (XdpProgram::SetSocket) decides
// which packets reach it.
#ifndef ONEPASS_SERVER_XDP_AF_XDP_XSK_SOCKET_H_
#define ONEPASS_SERVER_XDP_AF_XDP_XSK_SOCKET_H_

#include <xdp/xsk.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace onepass::xdp {

struct XskConfig {
  std::string ifname;
  uint32_t queue = 0;
  uint32_t ring_size = 1024;   // each of fill, completion, rx, tx; a power of two
  uint32_t frame_size = 2048;  // XSK_UMEM__DEFAULT_FRAME_SIZE / 2: one 1500-byte MTU frame
  // The kernel chooses: zero-copy where the driver has it, else copy (veth, generic XDP).
};

// A received frame: `bytes` points into the UMEM and stays valid until Release.
struct XskFrame {
  uint64_t addr = 0;  // UMEM offset, for Release
  std::span<const uint8_t> bytes;
};

struct XskStats {
  uint64_t tx_frames = 0, tx_no_frame = 0, tx_too_large = 0, kick_errors = 0;
};

class XskSocket {
 public:
  static absl::StatusOr<std::unique_ptr<XskSocket>> Open(const XskConfig& config);
  ~XskSocket();
  XskSocket(const XskSocket&) = delete;
  XskSocket& operator=(const XskSocket&) = delete;

  // For poll(2) (POLLIN: the rx ring has frames) and XdpProgram::SetSocket.
  int fd() const { return xsk_socket__fd(xsk_); }
  bool zero_copy() const { return zero_copy_; }

  // Takes up to out.size() received frames; returns how many. Each must be given back with
  // Release (in any order, in batches) before the rx half of the UMEM runs dry.
  size_t Receive(std::span<XskFrame> out);
  void Release(std::span<const XskFrame> frames);

  // Copies `frame` into a free tx frame and queues it; false when it is larger than a frame or
  // every tx frame is in flight (the packet is dropped; TCP retransmits). Flush sends.
  bool Send(std::span<const uint8_t> frame);
  // Wakes the kernel for queued frames when it asks to be (copy mode always does: the copy
  // happens in sendto) and takes back the frames it has sent.
  void Flush();

  const XskStats& stats() const { return stats_; }

 private:
  explicit XskSocket(const XskConfig& config) : config_(config) {}
  absl::Status Init();
  void ReapCompletions();

  XskConfig config_;
  void* area_ = nullptr;  // mmap'd UMEM, ring_size * 2 frames
  size_t area_bytes_ = 0;
  xsk_umem* umem_ = nullptr;
  xsk_socket* xsk_ = nullptr;
  xsk_ring_prod fill_{};
  xsk_ring_cons completion_{};
  xsk_ring_cons rx_{};
  xsk_ring_prod tx_{};
  std::vector<uint64_t> tx_free_;  // UMEM offsets of free tx frames; capacity fixed at Open
  bool zero_copy_ = false;
  XskStats stats_;
};

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_AF_XDP_XSK_SOCKET_H_
