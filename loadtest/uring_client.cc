#include "loadtest/uring_client.h"

#include <liburing.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "loadtest/client_loop.h"
#include "loadtest/run_clock.h"

namespace onepass::load {
namespace {

// Not in Debian 12's liburing 2.3: the opcode of bind(2) on the ring (Linux 6.11), one after
// IORING_OP_FTRUNCATE in the kernel's enum io_uring_op.
constexpr uint8_t kOpBind = 56;
static_assert(IORING_OP_SOCKET == 45, "io_uring opcodes as the kernel numbers them");

constexpr unsigned kSubmissionEntries = 4096;
constexpr size_t kReceiveBytes = 4096;  // per slot; longer answers take several receives
constexpr unsigned kMaxChainLength = 5;
constexpr int kMaxBindTries = 8;  // then the connection counts as no_source_port

// user_data: the slot's chain number (32 bits) | the operation (8) | the slot (24). A
// completion of an earlier chain of the slot (there should be none) is recognised and dropped.
enum Op : uint8_t {
  kOpNone = 0,
  kOpSocketStep,
  kOpBindStep,
  kOpConnectStep,
  kOpSendStep,
  kOpRecvStep,
  kOpIgnored
};
constexpr uint64_t kSlotMask = (1u << 24) - 1;
uint64_t UserData(uint32_t chain, Op op, uint32_t slot) {
  return (static_cast<uint64_t>(chain) << 32) | (static_cast<uint64_t>(op) << 24) | slot;
}

class UringClientThread final : public LoadThread {
 public:
  UringClientThread(const LoadConfig& config, int index, int64_t start_ns,
                    const std::atomic<bool>* stop);
  ~UringClientThread() override;

  void Run() override { loop_.Run(*this); }
  ThreadStats Snapshot() override { return loop_.Snapshot(); }

  // The core's side of ClientLoop::Run (client_loop.h).
  absl::Status SetUp(int slots);  // `slots` connections at once
  void Start(uint32_t index, int64_t origin_ns, int64_t now_ns);
  int64_t Wait(int64_t wait_ns);
  void Expire(uint32_t index, int64_t now_ns);
  // Past the hard cap: timed out. The ring, closed at the end, takes its chain with it.
  void Abandon(uint32_t index, int64_t now_ns) { slots_[index]->exchange.OnTimeout(now_ns); }

 private:
  struct Slot {
    explicit Slot(Exchange machine) : exchange(std::move(machine)) {}
    Exchange exchange;
    uint32_t chain = 0;  // per chain; the one in flight when chain_in_flight
    bool chain_in_flight = false;
    size_t chain_send_bytes = 0;  // what the chain in flight sends
    int bind_tries = 0;           // --source: binds of this connection that found it in use
    sockaddr_storage source{};    // --source: this connection's address and port
    std::unique_ptr<char[]> buffer;
  };

  io_uring_sqe* Sqe();
  // After the prep call (which clears the flags): the flags and the user_data.
  void Mark(io_uring_sqe* sqe, Op op, uint32_t slot, unsigned flags);
  void Reserve(unsigned entries);
  // Where a chain begins: a new socket, the bind of one whose bind failed, or an open
  // connection (only SEND -> RECV or RECV).
  enum class From { kSocket, kBind, kConnected };
  void SubmitChain(uint32_t index, From from);
  void Complete(const io_uring_cqe& cqe, int64_t now_ns);
  void Continue(uint32_t index, int64_t now_ns);
  void CloseSlot(uint32_t index);
  void ChooseSource(Slot& slot);

  ClientLoop loop_;  // first: the exchanges below count into its statistics
  const LoadConfig& config_;
  io_uring ring_{};
  bool ring_ready_ = false;
  std::vector<std::unique_ptr<Slot>> slots_;
  uint64_t next_source_ = 0;
  int port_base_ = 0, port_count_ = 0;  // this thread's share of the local port range
};

UringClientThread::UringClientThread(const LoadConfig& config, int index, int64_t start_ns,
                                     const std::atomic<bool>* stop)
    : loop_(config, index, start_ns, stop), config_(config) {
  const int threads = std::max(config.threads, 1);
  // --source: the ports this thread binds, a slice of the local port range, so that two
  // threads never pick the same address and port.
  LocalPortRange range = ReadLocalPortRange();
  port_count_ = std::max(1, (range.last - range.first + 1) / threads);
  port_base_ = range.first + index * port_count_;
  // Each run starts the rotation elsewhere: a run right after one whose client closed first
  // would otherwise meet its TIME-WAIT sockets on the same addresses and ports.
  if (!config.sources.empty()) {
    next_source_ = static_cast<uint64_t>(MonotonicNs()) * 0x9E3779B97F4A7C15ULL %
                   (config.sources.size() * static_cast<uint64_t>(port_count_));
  }
}

UringClientThread::~UringClientThread() {
  // The ring first: nothing in flight may outlive the buffers below.
  if (ring_ready_) io_uring_queue_exit(&ring_);
}

absl::Status UringClientThread::SetUp(int count) {
  io_uring_params params{};
  // One chain's completion per connection in flight, plus the failures of CLOSE and cancels.
  params.cq_entries = static_cast<unsigned>(std::clamp(2 * count + 1024, 4096, 1 << 17));
  params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
                 IORING_SETUP_DEFER_TASKRUN;
  int error = io_uring_queue_init_params(kSubmissionEntries, &ring_, &params);
  if (error == -EINVAL) {  // before Linux 6.1: no DEFER_TASKRUN
    params.flags = IORING_SETUP_CQSIZE;
    error = io_uring_queue_init_params(kSubmissionEntries, &ring_, &params);
  }
  if (error < 0) return absl::UnavailableError(absl::StrCat("io_uring: ", std::strerror(-error)));
  ring_ready_ = true;
  io_uring_register_ring_fd(&ring_);
  // Slot i's socket is ring descriptor i for the whole run.
  error = io_uring_register_files_sparse(&ring_, static_cast<unsigned>(count));
  if (error < 0) {
    return absl::UnavailableError(
        absl::StrCat("io_uring_register_files_sparse(", count, "): ", std::strerror(-error)));
  }
  slots_.reserve(count);
  for (int i = 0; i < count; ++i) {
    slots_.push_back(
        std::make_unique<Slot>(Exchange(loop_.exchange_config(), loop_.requests(), loop_.stats())));
    slots_.back()->buffer = std::make_unique<char[]>(kReceiveBytes);
  }
  return absl::OkStatus();
}

void UringClientThread::Reserve(unsigned entries) {
  // A chain must not be cut by a full queue: the kernel would end the link at the cut.
  if (io_uring_sq_space_left(&ring_) < entries) io_uring_submit(&ring_);
}

io_uring_sqe* UringClientThread::Sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  if (sqe == nullptr) {  // Reserve made room for whole chains; single entries land here
    io_uring_submit(&ring_);
    sqe = io_uring_get_sqe(&ring_);
  }
  return sqe;
}

void UringClientThread::Mark(io_uring_sqe* sqe, Op op, uint32_t slot, unsigned flags) {
  io_uring_sqe_set_flags(sqe, flags);
  const uint32_t chain = op == kOpIgnored ? 0 : slots_[slot]->chain;
  io_uring_sqe_set_data64(sqe, UserData(chain, op, slot));
}

void UringClientThread::ChooseSource(Slot& slot) {
  const uint64_t n = next_source_++;
  const SocketAddress& address = config_.sources[n % config_.sources.size()];
  std::memcpy(&slot.source, &address.storage, sizeof(slot.source));
  const uint16_t port = static_cast<uint16_t>(
      port_base_ + static_cast<int>((n / config_.sources.size()) % port_count_));
  if (slot.source.ss_family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&slot.source)->sin6_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in*>(&slot.source)->sin_port = htons(port);
  }
}

void UringClientThread::Start(uint32_t index, int64_t origin_ns, int64_t now_ns) {
  Slot& slot = *slots_[index];
  slot.exchange.Begin(origin_ns, now_ns);
  loop_.ArmDeadline(index, now_ns);
  slot.bind_tries = 0;
  SubmitChain(index, From::kSocket);
}

void UringClientThread::SubmitChain(uint32_t index, From from) {
  Slot& slot = *slots_[index];
  ++slot.chain;
  slot.chain_in_flight = true;
  Reserve(kMaxChainLength);
  const unsigned link = IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
  if (from != From::kConnected) {
    io_uring_sqe* sqe = nullptr;
    if (from == From::kSocket) {
      sqe = Sqe();
      io_uring_prep_socket_direct(sqe, config_.target.family(), SOCK_STREAM, 0, index, 0);
      Mark(sqe, kOpSocketStep, index, link);
    }
    if (!config_.sources.empty()) {
      ChooseSource(slot);
      sqe = Sqe();
      const socklen_t length =
          slot.source.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
      io_uring_prep_rw(kOpBind, sqe, static_cast<int>(index), &slot.source, 0, length);
      Mark(sqe, kOpBindStep, index, link | IOSQE_FIXED_FILE);
    }
    sqe = Sqe();
    io_uring_prep_connect(sqe, static_cast<int>(index), config_.target.get(),
                          config_.target.length);
    Mark(sqe, kOpConnectStep, index, link | IOSQE_FIXED_FILE);
  }
  absl::string_view unsent = slot.exchange.unsent();
  slot.chain_send_bytes = unsent.size();
  if (!unsent.empty()) {
    io_uring_sqe* sqe = Sqe();
    io_uring_prep_send(sqe, static_cast<int>(index), unsent.data(), unsent.size(), MSG_NOSIGNAL);
    Mark(sqe, kOpSendStep, index, link | IOSQE_FIXED_FILE);
  }
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_recv(sqe, static_cast<int>(index), slot.buffer.get(), kReceiveBytes, 0);
  Mark(sqe, kOpRecvStep, index, IOSQE_FIXED_FILE);
  // Nothing can have arrived before the request went out: wait for data, do not try first.
  sqe->ioprio |= IORING_RECVSEND_POLL_FIRST;
}

void UringClientThread::Complete(const io_uring_cqe& cqe, int64_t now_ns) {
  const uint64_t data = cqe.user_data;
  const Op op = static_cast<Op>((data >> 24) & 0xFF);
  const uint32_t index = static_cast<uint32_t>(data & kSlotMask);
  if (op == kOpIgnored || op == kOpNone || index >= slots_.size()) return;
  Slot& slot = *slots_[index];
  if (!slot.chain_in_flight || static_cast<uint32_t>(data >> 32) != slot.chain) return;
  slot.chain_in_flight = false;
  Exchange& exchange = slot.exchange;
  const int result = cqe.res;
  switch (op) {
    case kOpBindStep:
      // The address and port are in use (a TIME-WAIT of an earlier run, when the client closed
      // first): the socket is made, bind it to the next ones.
      if (result == -EADDRINUSE && ++slot.bind_tries < kMaxBindTries) {
        SubmitChain(index, From::kBind);
        return;
      }
      exchange.OnConnected(result < 0 ? -result : ECONNABORTED, now_ns);
      break;
    case kOpSocketStep:
    case kOpConnectStep:
      exchange.OnConnected(result < 0 ? -result : ECONNABORTED, now_ns);
      break;
    case kOpSendStep:  // a failure, or a short send (which ends the link too)
      exchange.OnConnected(0, now_ns);
      if (result < 0) {
        exchange.OnError(-result, now_ns);
      } else {
        exchange.OnSent(static_cast<size_t>(result), now_ns);
      }
      break;
    case kOpRecvStep:
      // Every earlier link succeeded (each would have reported its failure instead).
      exchange.OnConnected(0, now_ns);
      exchange.OnSent(slot.chain_send_bytes, now_ns);
      if (result > 0) {
        exchange.OnReceived(absl::string_view(slot.buffer.get(), static_cast<size_t>(result)),
                            now_ns);
      } else if (result == 0) {
        exchange.OnPeerClosed(now_ns);
      } else if (result != -ECANCELED) {  // ECANCELED: our timeout's cancel, counted already
        exchange.OnError(-result, now_ns);
      }
      break;
    default:
      break;
  }
  Continue(index, now_ns);
}

void UringClientThread::Continue(uint32_t index, int64_t now_ns) {
  Slot& slot = *slots_[index];
  if (slot.chain_in_flight) return;
  if (slot.exchange.active()) {
    if (slot.exchange.wants_receive()) {
      SubmitChain(index, From::kConnected);
      return;
    }
    slot.exchange.OnTimeout(now_ns);  // unreachable: an active exchange awaits answers
  }
  CloseSlot(index);
}

void UringClientThread::CloseSlot(uint32_t index) {
  // Queued before any later SOCKET into the same descriptor, and done inline: the slot is
  // free at once.
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_close_direct(sqe, index);
  Mark(sqe, kOpIgnored, index, IOSQE_CQE_SKIP_SUCCESS);
  loop_.Release(index);
}

void UringClientThread::Expire(uint32_t index, int64_t now_ns) {
  Slot& slot = *slots_[index];
  slot.exchange.OnTimeout(now_ns);
  if (!slot.chain_in_flight) {
    CloseSlot(index);
    return;
  }
  // The chain ends with ECANCELED and the slot closes then. Should the cancel miss it (the
  // chain between two links), it is tried again a timeout later.
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_cancel_fd(sqe, static_cast<int>(index),
                          IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD_FIXED);
  Mark(sqe, kOpIgnored, index, 0);
  loop_.ArmDeadline(index, now_ns);
}

int64_t UringClientThread::Wait(int64_t wait_ns) {
  // One system call submits every chain queued since the last and waits. It returns once a
  // quarter of the connections have news (or at the timeout: the next start, deadline or
  // publication), not at every completion: with DEFER_TASKRUN the kernel counts the ring's
  // pending work and wakes the thread once there is that much, so one wakeup (a context
  // switch, the dearest thing a loaded client does) serves many connections.
  __kernel_timespec timeout = {wait_ns / 1'000'000'000, wait_ns % 1'000'000'000};
  const unsigned wait_for =
      wait_ns > 0 ? static_cast<unsigned>(std::clamp(loop_.inflight() / 4, 1, 64)) : 0;
  io_uring_cqe* first = nullptr;
  io_uring_submit_and_wait_timeout(&ring_, &first, wait_for, &timeout, nullptr);
  const int64_t now = MonotonicNs();
  unsigned head;
  unsigned seen = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    Complete(*cqe, now);
    ++seen;
  }
  io_uring_cq_advance(&ring_, seen);
  return now;
}

}  // namespace

absl::Status UringEngineAvailable(const LoadConfig& config) {
  io_uring_probe* probe = io_uring_get_probe();
  if (probe == nullptr) return absl::UnavailableError("io_uring is not available");
  const bool socket = io_uring_opcode_supported(probe, IORING_OP_SOCKET);
  const bool bind = probe->last_op >= kOpBind && io_uring_opcode_supported(probe, kOpBind);
  io_uring_free_probe(probe);
  if (!socket) return absl::UnavailableError("the kernel's io_uring lacks SOCKET (Linux 5.19)");
  if (!config.sources.empty() && !bind) {
    return absl::UnavailableError("the kernel's io_uring lacks BIND for --source (Linux 6.11)");
  }
  return absl::OkStatus();
}

std::unique_ptr<LoadThread> MakeUringClientThread(const LoadConfig& config, int index,
                                                  int64_t start_ns, const std::atomic<bool>* stop) {
  return std::make_unique<UringClientThread>(config, index, start_ns, stop);
}

}  // namespace onepass::load
