// The worker core (server/core/worker_core.h) under a scripted driver, without real sockets
// (like dnsdist's MockupFDMultiplexer): each transition of the lifecycle — single pass, park
// to read or to write, partial sends, EAGAIN, a reset, deadline expiry on a fake clock, a
// full pool, a refused first park that holds answer bytes, accept pauses, the drain — is driven
// by hand and asserted on what the core asked the driver and the socket calls to do.
#include "server/core/worker_core.h"

#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/core/io_driver.h"
#include "server/core/socket_io.h"
#include "server/core/timer_queue.h"
#include "tests/support/line_handler.h"

namespace onepass {
namespace {

using testing::LineHandlerFactory;
using testing::LineProtocolOptions;

SteadyTime fake_now = SteadyTime() + std::chrono::hours(1);
SteadyTime FakeNow() { return fake_now; }
// The wall clock handlers see, on the same fake time.
absl::Time FakeWallNow() {
  return absl::UnixEpoch() + absl::FromChrono(fake_now.time_since_epoch());
}

// The driver: records what the core asks of it; the test fires readiness by hand.
class ScriptedDriver final : public IoDriver {
 public:
  explicit ScriptedDriver(TimerQueue* timers) : IoDriver(timers) {}
  void Arm(FdWatch& watch) override { armed[watch.fd()] = &watch; }
  void Disarm(FdWatch& watch) override { armed.erase(watch.fd()); }
  void Forget(FdWatch&) override {}
  void CloseSocket(int fd, bool abort) override { closed.push_back({fd, abort}); }
  void SetAccepting(bool on) override { accepting = on; }
  void CloseListeners(bool take_queued) override {
    listeners_closed = true;
    sink_->OnListenersClosed();
  }
  std::vector<int> listener_fds() const override { return {}; }
  void AdoptListenersIntoThisTable() override {}
  FinalSendQueue* final_send() override { return nullptr; }
  int receives_in_flight() const override { return receives; }
  absl::Status Run() override { return absl::OkStatus(); }
  void Stop() override { stopped = true; }

  // `fd`'s watch reports ready; false when none is armed.
  bool Ready(int fd) {
    auto it = armed.find(fd);
    if (it == armed.end()) return false;
    FdWatch* watch = it->second;
    if (!watch->persistent()) armed.erase(it);
    watch->Fire();
    return true;
  }
  bool Watching(int fd, Interest interest) const {
    auto it = armed.find(fd);
    return it != armed.end() && it->second->interest() == interest;
  }
  ConnectionSink* sink() { return sink_; }

  struct Closed {
    int fd;
    bool abort;
  };
  std::map<int, FdWatch*> armed;
  std::vector<Closed> closed;
  int receives = 0;  // > 0: the core's entry is the ring's (BeginReceive, Received)
  bool accepting = false;
  bool listeners_closed = false;
  bool stopped = false;
};

// The sockets: what each "receives" (chunks, then EAGAIN unless EOF or an error is queued), and
// how much each send may take.
class ScriptedSockets final : public SocketIo {
 public:
  struct Socket {
    std::deque<std::string> inbound;  // "" = EOF
    int receive_error = 0;            // after inbound: -errno
    size_t send_room = SIZE_MAX;      // bytes the next sends may take in all; 0: EAGAIN
    int send_error = 0;               // when set, every send fails with it
    std::string sent;
    int sends = 0;
    bool shut = false;
  };
  ssize_t Receive(int fd, absl::Span<uint8_t> into) override {
    Socket& socket = sockets[fd];
    if (socket.inbound.empty()) return socket.receive_error != 0 ? -socket.receive_error : -EAGAIN;
    std::string& chunk = socket.inbound.front();
    if (chunk.empty()) return 0;  // EOF stays
    const size_t n = std::min(chunk.size(), into.size());
    std::copy(chunk.begin(), chunk.begin() + n, into.begin());
    chunk.erase(0, n);
    if (chunk.empty()) socket.inbound.pop_front();
    return static_cast<ssize_t>(n);
  }
  ssize_t Send(int fd, absl::Span<const uint8_t> bytes, bool) override {
    Socket& socket = sockets[fd];
    ++socket.sends;
    if (socket.send_error != 0) return -socket.send_error;
    if (socket.send_room == 0) return -EAGAIN;
    const size_t n = std::min(socket.send_room, bytes.size());
    if (socket.send_room != SIZE_MAX) socket.send_room -= n;
    socket.sent.append(reinterpret_cast<const char*>(bytes.data()), n);
    return static_cast<ssize_t>(n);
  }
  ssize_t SendFile(int fd, int file, uint64_t offset, size_t count) override {
    std::string bytes(count, '\0');
    const ssize_t n = pread(file, bytes.data(), count, static_cast<off_t>(offset));
    if (n <= 0) return n < 0 ? -errno : 0;
    return Send(fd, absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(bytes.data()), n), false);
  }
  void ShutdownWrite(int fd) override { sockets[fd].shut = true; }
  size_t UnsentBytes(int) override { return 0; }
  void SetWritableWhenSent(int) override {}

  std::map<int, Socket> sockets;
};

class WorkerCoreTest : public ::testing::Test {
 protected:
  WorkerCoreTest() : driver_(&timers_), clients_(std::make_unique<ClientTable>(1000)) {
    config_.read_timeout = absl::Seconds(2);
    config_.write_timeout = absl::Seconds(3);
    config_.drain_timeout = absl::Seconds(5);
    config_.accept_pause = absl::Milliseconds(500);
  }
  void Start(int max_connections = 8, LineProtocolOptions options = {},
             std::shared_ptr<const HandlerFactory> factory = nullptr) {
    if (factory == nullptr) factory = std::make_shared<LineHandlerFactory>(options);
    core_ = std::make_unique<WorkerCore>(0, config_, ProxyPolicy(), max_connections, clients_.get(),
                                         std::move(factory), &driver_, secure_);
    core_->set_socket_io(&sockets_);
    core_->set_clock({.steady = &FakeNow, .wall = &FakeWallNow});
    ASSERT_TRUE(core_->Init().ok());
    core_->StartOnThread();
  }
  // A connection from 192.0.2.<host> whose socket holds `chunks` ("" = EOF).
  void Accept(int fd, std::vector<std::string> chunks, int host = 1, int listener = 0) {
    for (std::string& chunk : chunks) sockets_.sockets[fd].inbound.push_back(std::move(chunk));
    core_->ServeAccepted(fd, Peer(host), listener);
  }
  static sockaddr_storage Peer(int host) {
    sockaddr_storage peer{};
    auto* v4 = reinterpret_cast<sockaddr_in*>(&peer);
    v4->sin_family = AF_INET;
    v4->sin_addr.s_addr = htonl(0xC0000200u + host);
    return peer;
  }
  // The ring's entry: the driver makes the first recv itself, of `bytes`; false when the core
  // refused the connection at once.
  bool AcceptByRing(int fd, const std::string& bytes, int host = 1) {
    const ConnectionSink::Receive receive = core_->BeginReceive(fd, Peer(host), 0);
    if (receive.handle == nullptr) return false;
    EXPECT_GE(receive.into.size(), bytes.size());
    std::copy(bytes.begin(), bytes.end(), receive.into.begin());
    core_->Received(receive.handle, static_cast<ssize_t>(bytes.size()));
    return true;
  }
  void Advance(absl::Duration by) {
    fake_now += absl::ToChronoNanoseconds(by);
    timers_.RunExpired(fake_now);
  }
  bool Closed(int fd, bool abort) const {
    for (const auto& c : driver_.closed) {
      if (c.fd == fd) return c.abort == abort;
    }
    return false;
  }
  StatsSnapshot Stats() const { return core_->ReadStats(); }

  CoreConfig config_;
  SecureListeners secure_;
  TimerQueue timers_;
  ScriptedDriver driver_;
  ScriptedSockets sockets_;
  std::unique_ptr<ClientTable> clients_;
  std::unique_ptr<WorkerCore> core_;
};

TEST_F(WorkerCoreTest, SinglePassAnswersInOneSendAndClosesWithoutParking) {
  Start();
  Accept(10, {"hello\n"});
  EXPECT_EQ(sockets_.sockets[10].sent, "worker=0 hello\n");
  EXPECT_EQ(sockets_.sockets[10].sends, 1);
  EXPECT_TRUE(Closed(10, /*abort=*/false));
  EXPECT_TRUE(driver_.armed.empty());
  EXPECT_EQ(Stats().single_pass, 1u);
  EXPECT_EQ(Stats().parked, 0u);
}

TEST_F(WorkerCoreTest, IncompleteRequestParksReadableAndFinishesWhenTheRestComes) {
  Start();
  Accept(10, {"hel"});
  ASSERT_TRUE(driver_.Watching(10, Interest::kReadable));
  EXPECT_EQ(core_->parked(), 1u);
  sockets_.sockets[10].inbound.push_back("lo\n");
  ASSERT_TRUE(driver_.Ready(10));
  EXPECT_EQ(sockets_.sockets[10].sent, "worker=0 hello\n");
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(core_->parked(), 0u);
  EXPECT_EQ(timers_.size(), 1u);  // the heartbeat only: the connection's deadline is gone
}

TEST_F(WorkerCoreTest, SilentClientIsCutAtTheReadDeadlineOnTheFakeClock) {
  Start();
  Accept(10, {"hel"});
  Advance(absl::Milliseconds(1900));
  EXPECT_TRUE(driver_.closed.empty());
  Advance(absl::Milliseconds(200));
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(Stats().read_timeouts, 1u);
  EXPECT_EQ(Stats().closed_unused, 0u);  // it sent "hel"
  EXPECT_TRUE(driver_.armed.empty());
}

TEST_F(WorkerCoreTest, ClientSilentFromTheStartIsCountedUnusedAtTheReadDeadline) {
  Start();
  Accept(10, {});
  Advance(absl::Milliseconds(2100));
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(Stats().read_timeouts, 1u);
  EXPECT_EQ(Stats().closed_unused, 1u);
}

TEST_F(WorkerCoreTest, FullSocketBufferParksWritableAndPartialSendsFinishTheAnswer) {
  Start();
  sockets_.sockets[10].send_room = 4;  // the first send takes 4 bytes, then EAGAIN
  Accept(10, {"hello\n"});
  ASSERT_TRUE(driver_.Watching(10, Interest::kWritable));
  EXPECT_EQ(sockets_.sockets[10].sent, "work");
  for (int round = 0; round < 10 && driver_.Watching(10, Interest::kWritable); ++round) {
    sockets_.sockets[10].send_room = 3;
    ASSERT_TRUE(driver_.Ready(10));
  }
  EXPECT_EQ(sockets_.sockets[10].sent, "worker=0 hello\n");
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(Stats().served, 1u);
}

TEST_F(WorkerCoreTest, ReaderThatNeverReadsIsAbortedAtTheWriteDeadline) {
  Start();
  sockets_.sockets[10].send_room = 0;
  Accept(10, {"hello\n"});
  ASSERT_TRUE(driver_.Watching(10, Interest::kWritable));
  Advance(absl::Seconds(3));
  EXPECT_TRUE(Closed(10, /*abort=*/true));  // answer bytes unsent: no orphan keeps them
  EXPECT_EQ(Stats().write_timeouts, 1u);
}

TEST_F(WorkerCoreTest, ResetWhileParkedClosesAndCounts) {
  Start();
  Accept(10, {"hel"});
  sockets_.sockets[10].receive_error = ECONNRESET;
  ASSERT_TRUE(driver_.Ready(10));
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(Stats().reset_errors, 1u);
  EXPECT_EQ(core_->parked(), 0u);
}

// A full pool makes room from the connection that has waited longest for its request
// (round four: stalled clients must not keep a newcomer out).
TEST_F(WorkerCoreTest, FullPoolMakesRoomFromTheConnectionWaitingLongest) {
  Start(/*max_connections=*/2);
  Accept(10, {"a"});
  Accept(11, {"b"}, /*host=*/2);
  Accept(12, {"c"}, /*host=*/3);
  EXPECT_TRUE(Closed(10, false));
  EXPECT_TRUE(driver_.Watching(11, Interest::kReadable));
  EXPECT_TRUE(driver_.Watching(12, Interest::kReadable));
  EXPECT_EQ(Stats().evicted_waiting, 1u);
  EXPECT_EQ(Stats().rejected_pool_full, 0u);
  EXPECT_EQ(core_->parked(), 2u);
}

// Nothing waits to read (the one parked writes an answer): the newcomer is refused, and
// aborted since it holds answer bytes its client has not taken.
TEST_F(WorkerCoreTest, RefusedFirstParkWithUnsentAnswerBytesIsAborted) {
  Start(/*max_connections=*/1);
  sockets_.sockets[10].send_room = 4;
  Accept(10, {"hello\n"});
  sockets_.sockets[11].send_room = 4;
  Accept(11, {"hello\n"}, /*host=*/2);
  EXPECT_TRUE(driver_.Watching(10, Interest::kWritable));
  EXPECT_TRUE(Closed(11, /*abort=*/true));
  EXPECT_EQ(Stats().rejected_pool_full, 1u);
}

TEST_F(WorkerCoreTest, PerClientLimitRefusesBeyondTheClientsShare) {
  config_.client_prefix_v4 = 32;
  clients_ = std::make_unique<ClientTable>(1);
  Start();
  Accept(10, {"a"});
  Accept(11, {"b"});
  Accept(12, {"c"}, /*host=*/2);
  EXPECT_TRUE(Closed(11, false));
  EXPECT_EQ(Stats().rejected_per_client, 1u);
  EXPECT_EQ(core_->parked(), 2u);
}

TEST_F(WorkerCoreTest, AcceptErrorsPauseOnlyOnLackOfResources) {
  Start();
  EXPECT_TRUE(driver_.accepting);
  EXPECT_EQ(core_->OnAcceptError(ECONNABORTED), AcceptNext::kAcceptMore);
  EXPECT_EQ(core_->OnAcceptError(EAGAIN), AcceptNext::kDone);
  EXPECT_TRUE(driver_.accepting);
  EXPECT_EQ(core_->OnAcceptError(EMFILE), AcceptNext::kPaused);
  EXPECT_FALSE(driver_.accepting);
  EXPECT_EQ(Stats().accept_pauses, 1u);
  Advance(absl::Milliseconds(400));
  EXPECT_FALSE(driver_.accepting);
  Advance(absl::Milliseconds(100));
  EXPECT_TRUE(driver_.accepting);
}

TEST_F(WorkerCoreTest, DrainClosesIdleConnectionsAtOnceAndStopsWhenTheLastIsDone) {
  config_.keepalive = absl::Seconds(10);
  Start();
  Accept(10, {"idle\n"});  // answered, kept alive: idle
  Accept(11, {"busy"}, /*host=*/2);
  ASSERT_EQ(core_->parked(), 2u);
  core_->BeginDrain();
  EXPECT_TRUE(driver_.listeners_closed);
  EXPECT_TRUE(Closed(10, false));
  EXPECT_FALSE(driver_.stopped);
  sockets_.sockets[11].inbound.push_back(" done\n");
  sockets_.sockets[11].inbound.push_back("");  // the client's EOF after its request
  ASSERT_TRUE(driver_.Ready(11));
  EXPECT_NE(sockets_.sockets[11].sent.find("busy done"), std::string::npos);
  EXPECT_TRUE(driver_.stopped);
}

TEST_F(WorkerCoreTest, KeepaliveLearnsClientsThatCloseAfterOneRequestAndGivesThemTheSinglePass) {
  config_.keepalive = absl::Seconds(10);
  Start(/*max_connections=*/64);
  int fd = 100;
  // A client that reads its answer and closes: kept open (and parked) until it has shown it.
  for (int i = 0; i < ReuseLearner::kOneShotAfter; ++i, ++fd) {
    Accept(fd, {"one\n"}, /*host=*/3);
    ASSERT_TRUE(driver_.Watching(fd, Interest::kReadable)) << "connection " << i;
    sockets_.sockets[fd].inbound.push_back("");  // its close
    ASSERT_TRUE(driver_.Ready(fd));
    ASSERT_TRUE(Closed(fd, false));
  }
  EXPECT_EQ(Stats().keepalive_skipped, 0u);
  // Then the single pass: answered and closed at once, no park, no wait for its FIN.
  const uint64_t parked = Stats().parked;
  Accept(fd, {"one\n"}, /*host=*/3);
  EXPECT_EQ(sockets_.sockets[fd].sent, "worker=0 one\n");
  EXPECT_TRUE(Closed(fd, false));
  EXPECT_FALSE(driver_.Watching(fd, Interest::kReadable));
  EXPECT_EQ(Stats().parked, parked);
  EXPECT_EQ(Stats().keepalive_skipped, 1u);
  ++fd;
  // Another client still gets keepalive.
  Accept(fd, {"other\n"}, /*host=*/4);
  EXPECT_TRUE(driver_.Watching(fd, Interest::kReadable));
  ++fd;
  // One connection in kProbeEvery is kept open; a second request on it restores keepalive.
  int probe = -1;
  for (int i = 0; i < ReuseLearner::kProbeEvery && probe < 0; ++i, ++fd) {
    Accept(fd, {"one\n"}, /*host=*/3);
    if (driver_.Watching(fd, Interest::kReadable)) probe = fd;
  }
  ASSERT_GE(probe, 0) << "no probe in " << static_cast<int>(ReuseLearner::kProbeEvery);
  sockets_.sockets[probe].inbound.push_back("two\n");
  sockets_.sockets[probe].inbound.push_back("");
  for (int turn = 0; turn < 3 && driver_.Ready(probe); ++turn) {
  }
  EXPECT_EQ(sockets_.sockets[probe].sent, "worker=0 one\nworker=0 two\n");
  ASSERT_TRUE(Closed(probe, false));
  const uint64_t skipped = Stats().keepalive_skipped;
  Accept(fd, {"three\n"}, /*host=*/3);
  EXPECT_TRUE(driver_.Watching(fd, Interest::kReadable)) << "the client reuses: kept open again";
  EXPECT_EQ(Stats().keepalive_skipped, skipped);
}

TEST_F(WorkerCoreTest, KeepaliveLearnOffKeepsEveryConnectionOpen) {
  config_.keepalive = absl::Seconds(10);
  config_.keepalive_learn = false;
  Start(/*max_connections=*/64);
  for (int fd = 100; fd < 100 + 2 * ReuseLearner::kOneShotAfter; ++fd) {
    Accept(fd, {"one\n"}, /*host=*/3);
    ASSERT_TRUE(driver_.Watching(fd, Interest::kReadable));
    sockets_.sockets[fd].inbound.push_back("");
    ASSERT_TRUE(driver_.Ready(fd));
  }
  EXPECT_EQ(Stats().keepalive_skipped, 0u);
}

TEST_F(WorkerCoreTest, DrainDeadlineClosesWhatIsLeftAndStops) {
  config_.read_timeout = absl::Seconds(30);  // the drain's deadline comes first
  Start();
  Accept(10, {"slow"});
  core_->BeginDrain();
  EXPECT_FALSE(driver_.stopped);
  Advance(absl::Seconds(5));
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(Stats().closed_drain, 1u);
  EXPECT_TRUE(driver_.stopped);
}

TEST_F(WorkerCoreTest, RingEntryServesTheSinglePassFromTheDriversOwnRecv) {
  driver_.receives = 2;
  Start();
  ASSERT_TRUE(AcceptByRing(10, "hello\n"));
  EXPECT_EQ(sockets_.sockets[10].sent, "worker=0 hello\n");
  EXPECT_TRUE(Closed(10, /*abort=*/false));
  EXPECT_EQ(Stats().single_pass, 1u);
  // A request in two pieces parks after the driver's recv, then finishes on readiness.
  ASSERT_TRUE(AcceptByRing(11, "hel"));
  ASSERT_TRUE(driver_.Watching(11, Interest::kReadable));
  sockets_.sockets[11].inbound.push_back("lo\n");
  ASSERT_TRUE(driver_.Ready(11));
  EXPECT_EQ(sockets_.sockets[11].sent, "worker=0 hello\n");
  EXPECT_EQ(core_->parked(), 0u);
}

TEST_F(WorkerCoreTest, RingEntryBeyondTheReceivesInFlightIsRefused) {
  driver_.receives = 1;
  Start();
  const ConnectionSink::Receive first = core_->BeginReceive(10, Peer(1), 0);
  ASSERT_NE(first.handle, nullptr);
  EXPECT_EQ(core_->BeginReceive(11, Peer(2), 0).handle, nullptr);  // its recv slot is taken
  EXPECT_TRUE(Closed(11, /*abort=*/false));
  EXPECT_EQ(Stats().rejected_pool_full, 1u);
  core_->Received(first.handle, 0);  // EOF before any byte
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(Stats().closed_unused, 1u);
}

// A handler that answers each line with the time it was given (RequestContext::now).
class ClockHandler final : public Handler {
 public:
  Verdict Process(absl::Span<const uint8_t> input, const RequestContext& context,
                  OutputBuffer& out) override {
    const auto end = std::find(input.begin(), input.end(), '\n');
    if (end == input.end()) return {.action = Action::kReadMore};
    const std::string now = absl::StrCat(absl::ToUnixSeconds(context.now), "\n");
    if (!out.Append({reinterpret_cast<const uint8_t*>(now.data()), now.size()})) return {};
    return {.action = Action::kWriteThenClose,
            .consumed = static_cast<size_t>(end - input.begin()) + 1};
  }
};
class ClockHandlerFactory final : public HandlerFactory {
 public:
  absl::string_view Name() const override { return "clock"; }
  std::unique_ptr<Handler> CreateHandler(HandlerCounters&) const override {
    return std::make_unique<ClockHandler>();
  }
  size_t MaxRequestBytes() const override { return 64; }
  size_t OutputBufferBytes() const override { return 64; }
};

TEST_F(WorkerCoreTest, HandlersSeeTheCoresWallClock) {
  Start(8, {}, std::make_shared<ClockHandlerFactory>());
  Advance(absl::Seconds(1000));
  const std::string expected = absl::StrCat(absl::ToUnixSeconds(FakeWallNow()), "\n");
  Accept(10, {"what time\n"});
  EXPECT_EQ(sockets_.sockets[10].sent, expected);
}

// A transport whose handshake never ends (the core sees only Transport's calls): the secure
// listener's connections go through it, their admission refuses or evicts.
class StalledTransport final : public Transport {
 public:
  absl::Span<uint8_t> ReceiveTail(InputBuffer& input) override { return input.WritableTail(); }
  Intake TakeReceived(size_t n, InputBuffer&, SendPath&) override { return Intake::kNeedMore; }
  Owed owed() const override { return Owed::kNothing; }
  Flushed Flush(OutputBuffer& out, bool, SendPath&) override { return Flushed::kAll; }
  bool encrypted() const override { return true; }
  bool handshaking() const override { return true; }
  bool MayWait() override { return may_wait; }
  void Ended() override { ++ended; }
  void TimedOut() override { ++timed_out; }
  bool may_wait = true;
  int ended = 0;
  int timed_out = 0;
  void* owner = nullptr;
};
class StalledTransports final : public TransportFactory {
 public:
  std::unique_ptr<Transport> Make() override {
    auto transport = std::make_unique<StalledTransport>();
    made.push_back(transport.get());
    return transport;
  }
  bool Start(Transport& transport, const std::array<uint8_t, 16>&, void* owner) override {
    auto& stalled = static_cast<StalledTransport&>(transport);
    stalled.owner = owner;
    stalled.may_wait = may_wait;
    return true;
  }
  std::vector<StalledTransport*> made;
  bool may_wait = true;
};

TEST_F(WorkerCoreTest, SecureListenersGoThroughTheirTransportsAdmissionAndEviction) {
  StalledTransports transports;
  secure_ = {.first = 1, .transports = &transports, .keepalive = absl::Seconds(10)};
  Start();
  Accept(10, {"hello"}, /*host=*/1, /*listener=*/1);
  ASSERT_EQ(transports.made.size(), 1u);
  EXPECT_EQ(core_->parked(), 1u);  // waits for its client, counted at accept
  EXPECT_TRUE(sockets_.sockets[10].sent.empty());
  // The transport's admission refuses the next one as it would park.
  transports.may_wait = false;
  Accept(11, {"hello"}, 2, 1);
  EXPECT_TRUE(Closed(11, false));
  EXPECT_EQ(Stats().rejected_tls_handshakes, 1u);
  // Its admission evicts the first (TransportHost::Evict): closed, its transport told.
  core_->Evict(transports.made[0]->owner);
  EXPECT_TRUE(Closed(10, false));
  EXPECT_EQ(core_->parked(), 0u);
  EXPECT_GE(transports.made[0]->ended, 1);
  // A deadline mid-handshake is the transport's to count.
  transports.may_wait = true;
  Accept(12, {"hello"}, 3, 1);
  Advance(absl::Seconds(3));
  EXPECT_TRUE(Closed(12, false));
  int timed_out = 0;
  for (const StalledTransport* transport : transports.made) timed_out += transport->timed_out;
  EXPECT_EQ(timed_out, 1);
}

TEST(TimerQueueTest, FiresInOrderAndHonoursMovesAndCancels) {
  TimerQueue queue;
  std::vector<int> fired;
  const SteadyTime t0 = SteadyTime() + std::chrono::seconds(100);
  std::vector<std::unique_ptr<Timer>> timers;
  for (int i = 0; i < 50; ++i) {
    timers.push_back(std::make_unique<Timer>(&queue, [&fired, i] { fired.push_back(i); }));
    timers.back()->ArmAt(t0 + std::chrono::milliseconds((i * 37) % 50));
  }
  timers[3]->Cancel();
  timers[7]->ArmAt(t0 + std::chrono::seconds(10));  // moved later
  ASSERT_EQ(queue.Next(), t0);
  queue.RunExpired(t0 + std::chrono::seconds(1));
  EXPECT_EQ(fired.size(), 48u);
  for (size_t i = 1; i < fired.size(); ++i) {
    EXPECT_LE((fired[i - 1] * 37) % 50, (fired[i] * 37) % 50);
  }
  ASSERT_EQ(queue.Next(), t0 + std::chrono::seconds(10));
  queue.RunExpired(t0 + std::chrono::seconds(10));
  EXPECT_EQ(fired.back(), 7);
  EXPECT_FALSE(queue.Next().has_value());
}

}  // namespace
}  // namespace onepass
