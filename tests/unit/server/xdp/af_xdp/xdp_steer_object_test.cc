// The XDP program the library embeds is the one xdp_steer.bpf.c builds: an ELF BPF object with
// the program XdpProgram looks for and the two maps it fills, and BTF, which libxdp's
// dispatcher needs. Opening parses only; loading needs root (xdp_veth_test.cc).
#include "server/xdp/af_xdp/xdp_steer_object.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cstring>

#include "gtest/gtest.h"

namespace onepass::xdp {
namespace {

TEST(XdpSteerObjectTest, IsAnElfBpfObjectWithOurProgramMapsAndBtf) {
  const std::span<const uint8_t> bytes = XdpSteerObject();
  ASSERT_GT(bytes.size(), 4u);
  EXPECT_EQ(std::memcmp(bytes.data(),
                        "\x7f"
                        "ELF",
                        4),
            0);

  bpf_object* obj = bpf_object__open_mem(bytes.data(), bytes.size(), nullptr);
  ASSERT_NE(obj, nullptr);
  ASSERT_EQ(libbpf_get_error(obj), 0);
  bpf_program* program = bpf_object__find_program_by_name(obj, kXdpSteerProgramName);
  ASSERT_NE(program, nullptr);
  EXPECT_STREQ(bpf_program__section_name(program), "xdp");
  ASSERT_NE(bpf_object__find_map_by_name(obj, "ports"), nullptr);
  bpf_map* xsks = bpf_object__find_map_by_name(obj, "xsks");
  ASSERT_NE(xsks, nullptr);
  EXPECT_EQ(bpf_map__type(xsks), BPF_MAP_TYPE_XSKMAP);
  // XDP_RUN_CONFIG is read from BTF: without -g the dispatcher would use default priorities.
  EXPECT_NE(bpf_object__btf(obj), nullptr);
  bpf_object__close(obj);
}

}  // namespace
}  // namespace onepass::xdp
