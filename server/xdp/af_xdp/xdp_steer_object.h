// The compiled XDP program (xdp_steer.bpf.c), embedded in the library by the build
// (CMakeLists.txt, xdp_steer_object.c.in), so the server carries its own program.
#ifndef ONEPASS_SERVER_XDP_AF_XDP_XDP_STEER_OBJECT_H_
#define ONEPASS_SERVER_XDP_AF_XDP_XDP_STEER_OBJECT_H_

#include <cstdint>
#include <span>

extern "C" {
extern const uint8_t onepass_xdp_steer_object_begin[];
extern const uint8_t onepass_xdp_steer_object_end[];
}

namespace onepass::xdp {

// The ELF object's bytes; valid for the life of the process.
inline std::span<const uint8_t> XdpSteerObject() {
  return {onepass_xdp_steer_object_begin, onepass_xdp_steer_object_end};
}

// The program's function name in the object: how a stale copy is found on an interface.
inline constexpr char kXdpSteerProgramName[] = "xdp_steer";

}  // namespace onepass::xdp

#endif  // ONEPASS_SERVER_XDP_AF_XDP_XDP_STEER_OBJECT_H_
