// The io_uring worker loop's class (server/uring_loop.h says what it does), shared by its three
// files: uring_loop.cc (the ring, accepts, the first recv, last sends), uring_parking.cc
// (parked connections: polls, deadlines, closes, the drain) and uring_upstream.cc (a
// forwarding handler's upstreams). Not for other users.
#ifndef ONEPASS_SERVER_URING_LOOP_IMPL_H_
#define ONEPASS_SERVER_URING_LOOP_IMPL_H_

#include <liburing.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "server/connection.h"
#include "server/deadline.h"
#include "server/server_config.h"
#include "server/worker.h"

namespace onepass {
namespace uring_internal {

// What a completion is for: the low 3 bits of its user_data (pointers are 8-byte aligned; a
// close carries its fd above them).
enum class Op : uint64_t {
  kAccept = 0,     // AcceptSlot*
  kRecv = 1,       // Slot*: the first recv of a connection
  kPoll = 2,       // Slot*: a parked connection's readiness
  kSend = 3,       // SendSlot*: a last send (a close is linked after it)
  kClose = 4,      // fd << 3: the close linked after a last send, or a plain close
  kWake = 5,       // Wake << 3: one of the worker's eventfds (a multishot poll)
  kUpstreams = 6,  // the upstream event_base's epoll instance is readable (a one-shot poll)
  kIgnore = 7,     // cancels and poll removals: their targets complete on their own
};
inline constexpr uint64_t kOpMask = 7;

// Which of the worker's eventfds woke the loop (Op::kWake).
enum class Wake : uint64_t {
  kStop = 0,   // RequestStop
  kOffer = 1,  // OfferHandler (a reload)
};

inline uint64_t Tag(const void* pointer, Op op) {
  return reinterpret_cast<uintptr_t>(pointer) | static_cast<uint64_t>(op);
}

struct AcceptSlot {
  int listener = -1;
  sockaddr_storage address{};
  socklen_t address_length = 0;
  bool armed = false;
};

// A connection the loop holds, from its accept to the completion of its close.
struct Slot {
  explicit Slot(size_t input_bytes) : connection(input_bytes, /*output_capacity=*/0) {}
  enum class Phase : uint8_t { kFree, kReceiving, kParked, kClosing };
  Connection connection;
  Phase phase = Phase::kFree;
  bool poll_armed = false;
  size_t asked = 0;  // bytes the first recv asked for
  SteadyTime deadline{};
  size_t parked_index = 0;
};

struct SendSlot {
  std::array<uint8_t, kUnsentCheckBytes> bytes;
};

using Clock = std::chrono::steady_clock;

}  // namespace uring_internal

// Thread-confined to its worker's thread. Named (not in an anonymous namespace): Worker
// befriends it.
class UringLoop final : public FinalSendQueue, public UpstreamDelivery {
 public:
  explicit UringLoop(Worker& worker) : w_(worker) {}
  ~UringLoop() override;
  UringLoop(const UringLoop&) = delete;
  UringLoop& operator=(const UringLoop&) = delete;

  absl::Status Setup();
  void Run();

  // Interface FinalSendQueue.
  bool QueueFinalSend(int fd, absl::Span<const uint8_t> bytes) override;

  // Interface UpstreamDelivery: as Worker::DeliverUpstream does on the libevent loop.
  void DeliverUpstream(uint64_t connection, absl::Span<const uint8_t> answer) override;

 private:
  using AcceptSlot = uring_internal::AcceptSlot;
  using Slot = uring_internal::Slot;
  using SendSlot = uring_internal::SendSlot;
  using Op = uring_internal::Op;
  using Wake = uring_internal::Wake;

  io_uring_sqe* Sqe();
  void ArmAccept(AcceptSlot* slot);
  void ArmAccepts();
  void ArmWake(Wake wake);
  void OnCompletion(const io_uring_cqe& cqe);
  void OnAccepted(AcceptSlot* accept, int result);
  void StartConnection(int fd, const sockaddr_storage& address);
  void OnReceived(Slot* slot, int result);
  void OnPollReady(Slot* slot, int result);
  void OnSent(SendSlot* send, int result);
  void OnWake(Wake wake, bool more);
  // Runs Advance (or AdvanceReceived) on a connection that has an output buffer lent.
  void Lend(Connection& connection);
  // After Advance: closes, or parks for the state it returned (a new one is counted first).
  void After(Slot* slot, ConnectionState state, bool first);
  void Park(Slot* slot);
  void Close(Slot* slot);
  void CloseFd(int fd);
  void Release(Slot* slot);
  void Unpark(Slot* slot);
  Slot* AcquireSlot();
  void Expire(SteadyTime now);
  // Brings next_deadline_ forward to `at` if it is sooner.
  void NoteDeadline(SteadyTime at);
  void BeginDrain();
  void AcceptQueuedAndCloseListeners();
  bool Done() const;
  int64_t WaitNanos(SteadyTime now) const;

  // A forwarding handler's upstreams (uring_upstream.cc): the worker's event_base keeps the
  // upstream channel and its stream pool; the ring polls the base's epoll instance and runs
  // the base when it is readable and on each upstream tick.
  absl::Status FindUpstreamBase();
  void StartUpstreams(SteadyTime now);
  void ArmUpstreamPoll();
  void OnUpstreamsReady(int result);
  void RunUpstreams(SteadyTime now);
  // Keeps waiting_upstream_ in step with a connection about to park (or that parked).
  void TrackUpstream(Slot* slot);
  void ForgetUpstream(Slot* slot);

  Worker& w_;
  io_uring ring_{};
  bool ring_ready_ = false;
  std::vector<std::unique_ptr<AcceptSlot>> accepts_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_slots_;
  std::vector<Slot*> parked_;
  std::vector<std::unique_ptr<SendSlot>> sends_;
  std::vector<SendSlot*> free_sends_;
  int sends_in_flight_ = 0;
  int linked_closes_in_flight_ = 0;  // the closes after last sends, until their completion
  int slots_in_use_ = 0;
  // The connection Advance is running for, and whether its close went with its last send.
  int current_fd_ = -1;
  bool close_queued_ = false;
  std::optional<SteadyTime> next_deadline_;
  std::optional<SteadyTime> resume_at_;  // accepting again after EMFILE & co.
  std::optional<SteadyTime> drain_deadline_;
  // Set when the drain deadline passed: what is still in flight then (closes whose polls are
  // being cancelled, last sends) gets this long before the loop stops anyway.
  std::optional<SteadyTime> give_up_at_;
  SteadyTime last_beat_{};
  bool listeners_closed_ = false;
  bool stopping_ = false;

  // Forwarding only (w_.upstream_ set); unused otherwise.
  int upstream_epoll_ = -1;  // libevent's epoll instance of w_.base_ (not owned)
  bool upstream_poll_armed_ = false;
  bool upstream_ready_ = false;  // its poll completed: run the base
  std::optional<SteadyTime> next_tick_;
  std::chrono::nanoseconds tick_period_{};
  // Parked connections with answers still to come from upstream, by Connection::id().
  absl::flat_hash_map<uint64_t, Slot*> waiting_upstream_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_URING_LOOP_IMPL_H_
