#include "server/listener.h"

#include <sys/socket.h>

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace onepass {
namespace {

// Runs the subset of classic BPF the steering program uses, with `cpu` as SKF_AD_CPU.
uint32_t RunProgram(const std::vector<sock_filter>& program, uint32_t cpu) {
  uint32_t a = 0;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& insn = program[pc];
    if (insn.code == (BPF_LD | BPF_W | BPF_ABS)) {
      EXPECT_EQ(insn.k, static_cast<uint32_t>(SKF_AD_OFF + SKF_AD_CPU));
      a = cpu;
    } else if (insn.code == (BPF_JMP | BPF_JEQ | BPF_K)) {
      pc += (a == insn.k) ? insn.jt : insn.jf;
    } else if (insn.code == (BPF_RET | BPF_A)) {
      return a;
    } else if (insn.code == (BPF_RET | BPF_K)) {
      return insn.k;
    } else {
      ADD_FAILURE() << "unexpected opcode " << insn.code;
      return ~0u;
    }
  }
  ADD_FAILURE() << "fell off the end";
  return ~0u;
}

TEST(CpuSteeringProgramTest, ContiguousCpusReturnTheCpu) {
  std::vector<sock_filter> program = BuildCpuSteeringProgram(std::vector<int>{0, 1, 2, 3});
  EXPECT_EQ(program.size(), 2u);  // ld cpu; ret A
  for (uint32_t cpu = 0; cpu < 4; ++cpu) EXPECT_EQ(RunProgram(program, cpu), cpu);
  // CPU 9 has no worker: 9 >= group size makes the kernel use its hash.
  EXPECT_GE(RunProgram(program, 9), 4u);
}

TEST(CpuSteeringProgramTest, ScatteredCpusMapToWorkerIndexes) {
  const std::vector<int> cpus = {8, 2, 5};
  std::vector<sock_filter> program = BuildCpuSteeringProgram(cpus);
  EXPECT_EQ(RunProgram(program, 8), 0u);
  EXPECT_EQ(RunProgram(program, 2), 1u);
  EXPECT_EQ(RunProgram(program, 5), 2u);
  for (uint32_t cpu : {0u, 1u, 3u, 4u, 6u, 7u, 9u, 200u}) {
    EXPECT_EQ(RunProgram(program, cpu), 3u) << cpu;  // == group size: kernel hash
  }
}

TEST(CpuSteeringProgramTest, ManyWorkers) {
  std::vector<int> cpus;
  for (int cpu = 1; cpu <= 300; ++cpu) cpus.push_back(cpu);  // not 0..N-1: the jeq chain
  std::vector<sock_filter> program = BuildCpuSteeringProgram(cpus);
  EXPECT_LE(program.size(), static_cast<size_t>(BPF_MAXINSNS));
  for (int i = 0; i < 300; ++i) EXPECT_EQ(RunProgram(program, i + 1), static_cast<uint32_t>(i));
}

TEST(OpenListenersTest, AllWorkersShareThePortPickedForTheFirst) {
  absl::StatusOr<SocketAddress> address = ParseSocketAddress("127.0.0.1:0");
  ASSERT_TRUE(address.ok());
  absl::StatusOr<ListenerSet> set = OpenListeners({*address}, 3, 16, std::vector<int>{0, 1, 2});
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->bound.size(), 1u);
  EXPECT_NE(set->bound[0].port(), 0);
  ASSERT_EQ(set->by_worker.size(), 3u);
  for (const auto& sockets : set->by_worker) {
    ASSERT_EQ(sockets.size(), 1u);
    absl::StatusOr<SocketAddress> local = LocalAddress(sockets[0].get());
    ASSERT_TRUE(local.ok());
    EXPECT_EQ(local->port(), set->bound[0].port());
  }
}

TEST(OpenListenersTest, PortInUseSaysWhatToDo) {
  // A plain listener without SO_REUSEPORT holds the port.
  absl::StatusOr<SocketAddress> any = ParseSocketAddress("127.0.0.1:0");
  ASSERT_TRUE(any.ok());
  ScopedFd holder(socket(AF_INET, SOCK_STREAM, 0));
  ASSERT_EQ(bind(holder.get(), any->get(), any->length), 0);
  ASSERT_EQ(listen(holder.get(), 1), 0);
  absl::StatusOr<SocketAddress> taken = LocalAddress(holder.get());
  ASSERT_TRUE(taken.ok());
  absl::StatusOr<ListenerSet> set = OpenListeners({*taken}, 1, 16, {});
  ASSERT_FALSE(set.ok());
  EXPECT_NE(set.status().message().find("in use"), absl::string_view::npos) << set.status();
  EXPECT_NE(set.status().message().find("--listen"), absl::string_view::npos) << set.status();
}

}  // namespace
}  // namespace onepass
