#include "loadtest/uring_client.h"

#include <liburing.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/cpu_list.h"
#include "loadtest/run_clock.h"
#include "loadtest/run_schedule.h"

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

class UringClientThread : public LoadThread {
 public:
  UringClientThread(const LoadConfig& config, int index, int64_t start_ns,
                    const std::atomic<bool>* stop);
  ~UringClientThread() override;

  void Run() override;
  ThreadStats Snapshot() override;

 private:
  struct Slot {
    explicit Slot(Exchange machine) : exchange(std::move(machine)) {}
    Exchange exchange;
    uint32_t generation = 0;  // per connection
    uint32_t chain = 0;       // per chain; the one in flight when chain_in_flight
    bool chain_in_flight = false;
    bool busy = false;            // a connection holds the slot (until its CLOSE is queued)
    size_t chain_send_bytes = 0;  // what the chain in flight sends
    int bind_tries = 0;           // --source: binds of this connection that found it in use
    sockaddr_storage source{};    // --source: this connection's address and port
    std::unique_ptr<char[]> buffer;
  };
  struct Deadline {
    int64_t when_ns;
    uint32_t slot;
    uint32_t generation;
  };

  absl::Status SetUp(int slots);  // `slots` connections at once
  io_uring_sqe* Sqe();
  // After the prep call (which clears the flags): the flags and the user_data.
  void Mark(io_uring_sqe* sqe, Op op, uint32_t slot, unsigned flags);
  void Reserve(unsigned entries);
  void StartConnection(int64_t intended_ns, int64_t now_ns);
  // Where a chain begins: a new socket, the bind of one whose bind failed, or an open
  // connection (only SEND -> RECV or RECV).
  enum class From { kSocket, kBind, kConnected };
  void SubmitChain(uint32_t index, From from);
  void Complete(const io_uring_cqe& cqe, int64_t now_ns);
  void Continue(uint32_t index, int64_t now_ns);
  void CloseSlot(uint32_t index);
  void ExpireDeadlines(int64_t now_ns);
  void ChooseSource(Slot& slot);
  void Publish();

  const LoadConfig& config_;
  const int index_;
  const int64_t start_ns_;
  const std::atomic<bool>* stop_;
  ExchangeConfig exchange_config_;
  RequestSource requests_;

  io_uring ring_{};
  bool ring_ready_ = false;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<uint32_t> free_slots_;
  std::deque<Deadline> deadlines_;  // in start order: one timeout for all, so sorted
  int inflight_ = 0;                // connections begun and not ended
  uint64_t next_source_ = 0;
  int port_base_ = 0, port_count_ = 0;  // this thread's share of the local port range

  ThreadStats stats_;  // owned by the running thread
  std::mutex published_mutex_;
  ThreadStats published_;  // guarded by published_mutex_
};

UringClientThread::UringClientThread(const LoadConfig& config, int index, int64_t start_ns,
                                     const std::atomic<bool>* stop)
    : config_(config),
      index_(index),
      start_ns_(start_ns),
      stop_(stop),
      requests_(config.protocol, 0x9E3779B97F4A7C15ULL ^ (static_cast<uint64_t>(index + 1) << 32) ^
                                     static_cast<uint64_t>(MonotonicNs())) {
  exchange_config_.queries_per_conn = std::max(config.queries_per_conn, 1);
  exchange_config_.pipeline = std::clamp(config.pipeline, 1, exchange_config_.queries_per_conn);
  exchange_config_.max_response_bytes = config.max_response_bytes;
  exchange_config_.max_samples = static_cast<size_t>(std::max(config.mismatch_samples, 0));
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
    slots_.push_back(std::make_unique<Slot>(Exchange(&exchange_config_, &requests_, &stats_)));
    slots_.back()->buffer = std::make_unique<char[]>(kReceiveBytes);
  }
  for (int i = count - 1; i >= 0; --i) free_slots_.push_back(static_cast<uint32_t>(i));
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

void UringClientThread::StartConnection(int64_t intended_ns, int64_t now_ns) {
  const uint32_t index = free_slots_.back();
  free_slots_.pop_back();
  Slot& slot = *slots_[index];
  slot.busy = true;
  ++slot.generation;
  ++inflight_;
  slot.exchange.Begin(intended_ns, now_ns);
  deadlines_.push_back(
      {now_ns + static_cast<int64_t>(config_.timeout_ms) * 1'000'000, index, slot.generation});
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
  Slot& slot = *slots_[index];
  // Queued before any later SOCKET into the same descriptor, and done inline: the slot is
  // free at once.
  io_uring_sqe* sqe = Sqe();
  io_uring_prep_close_direct(sqe, index);
  Mark(sqe, kOpIgnored, index, IOSQE_CQE_SKIP_SUCCESS);
  slot.busy = false;
  --inflight_;
  free_slots_.push_back(index);
}

void UringClientThread::ExpireDeadlines(int64_t now_ns) {
  while (!deadlines_.empty() && deadlines_.front().when_ns <= now_ns) {
    const Deadline deadline = deadlines_.front();
    deadlines_.pop_front();
    Slot& slot = *slots_[deadline.slot];
    if (!slot.busy || slot.generation != deadline.generation) continue;
    slot.exchange.OnTimeout(now_ns);
    if (!slot.chain_in_flight) {
      CloseSlot(deadline.slot);
      continue;
    }
    // The chain ends with ECANCELED and the slot closes then. Should the cancel miss it (the
    // chain between two links), it is tried again a timeout later.
    io_uring_sqe* sqe = Sqe();
    io_uring_prep_cancel_fd(sqe, static_cast<int>(deadline.slot),
                            IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD_FIXED);
    Mark(sqe, kOpIgnored, deadline.slot, 0);
    deadlines_.push_back({now_ns + static_cast<int64_t>(config_.timeout_ms) * 1'000'000,
                          deadline.slot, deadline.generation});
  }
}

void UringClientThread::Run() {
  if (!config_.cpus.empty()) {
    const int cpu = config_.cpus[index_ % config_.cpus.size()];
    if (PinCurrentThread(cpu).ok()) stats_.cpu = cpu;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // open-loop starts are paced in microseconds
  RunSchedule schedule(config_, index_, start_ns_, stop_);
  if (absl::Status ready = SetUp(schedule.slots()); !ready.ok()) {
    stats_.local_error_samples.push_back(std::string(ready.message()));
    Publish();
    return;
  }
  schedule.Begin();  // all threads begin together
  while (true) {
    int64_t now = MonotonicNs();
    const std::optional<int64_t> wait = schedule.Pass(
        now, &stats_,
        [this](int64_t intended_ns, int64_t now_ns) { StartConnection(intended_ns, now_ns); },
        [this] { return inflight_; }, [this] { return !free_slots_.empty(); },
        [this]() -> std::optional<int64_t> {
          if (deadlines_.empty()) return std::nullopt;
          return deadlines_.front().when_ns;
        });
    if (!wait.has_value()) break;
    const int64_t wait_ns = *wait;
    // One system call submits every chain queued above and waits. It returns once a quarter of
    // the connections have news (or at the timeout: the next start, deadline or publication),
    // not at every completion: with DEFER_TASKRUN the kernel counts the ring's pending work
    // and wakes the thread once there is that much, so one wakeup (a context switch, the
    // dearest thing a loaded client does) serves many connections.
    __kernel_timespec timeout = {wait_ns / 1'000'000'000, wait_ns % 1'000'000'000};
    const unsigned wait_for =
        wait_ns > 0 ? static_cast<unsigned>(std::clamp(inflight_ / 4, 1, 64)) : 0;
    io_uring_cqe* first = nullptr;
    io_uring_submit_and_wait_timeout(&ring_, &first, wait_for, &timeout, nullptr);
    now = MonotonicNs();
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      Complete(*cqe, now);
      ++seen;
    }
    io_uring_cq_advance(&ring_, seen);
    ExpireDeadlines(now);
    if (schedule.PublishDue(now, &stats_)) Publish();
  }
  const int64_t now = MonotonicNs();
  for (auto& slot : slots_) {
    if (slot->busy) slot->exchange.OnTimeout(now);  // past the hard cap: timed out
  }
  schedule.End(now, &stats_);
  Publish();
}

void UringClientThread::Publish() {
  std::lock_guard<std::mutex> lock(published_mutex_);
  published_ = stats_;
}

ThreadStats UringClientThread::Snapshot() {
  std::lock_guard<std::mutex> lock(published_mutex_);
  return published_;
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
