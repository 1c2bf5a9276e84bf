// The client's side of one connection as a state machine that performs no I/O: the driver
// (either core, uring_client.h and epoll_client.h; a test) does the socket calls and reports each
// result; the machine decides what is sent next, judges every answer with the protocol's checker
// and counts the outcome in ThreadStats. One query per connection by default; with
// --queries-per-conn N it sends N on the connection, --pipeline W at a time: W in one send, the
// next W once all W are answered (answers paired by the protocol's MatchKey, in any order:
// RFC 7766 §7).
//
//   Begin -> [connecting] -> OnConnected(0) -> [exchanging: unsent() / wants_receive()]
//         -> OnSent / OnReceived ... -> ended (ok, or one ErrorKind counted)
//
// Every path ends the transaction exactly once: a connection counts once in started and once
// in ok or in one error kind. Not thread-safe; one per connection slot of one thread.
#ifndef ONEPASS_LOADTEST_EXCHANGE_H_
#define ONEPASS_LOADTEST_EXCHANGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "loadtest/protocol.h"
#include "loadtest/thread_stats.h"

namespace onepass::load {

struct ExchangeConfig {
  int queries_per_conn = 1;  // >= 1; > 1 needs a framed protocol (FrameLength)
  int pipeline = 1;          // queries in flight on a connection, 1..queries_per_conn
  size_t max_response_bytes = 1 << 20;
  size_t max_samples = 5;  // mismatch details kept per thread
};

// The requests of one thread: transaction numbers and message IDs.
class RequestSource {
 public:
  RequestSource(const ProtocolClient* protocol, uint64_t seed)
      : protocol_(protocol), state_(seed) {}
  const ProtocolClient& protocol() const { return *protocol_; }
  void Next(std::string* out) { protocol_->BuildRequest(sequence_++, NextRandom(), out); }

 private:
  uint32_t NextRandom();

  const ProtocolClient* protocol_;
  uint64_t sequence_ = 0;
  uint64_t state_;
};

class Exchange {
 public:
  // `config`, `requests`, `stats`: not owned, outlive the machine (the thread's).
  Exchange(const ExchangeConfig* config, RequestSource* requests, ThreadStats* stats)
      : config_(config), requests_(requests), stats_(stats) {}

  // A new connection: counts it started and queues its first window of queries.
  // `origin_ns`: its latency origin (open loop: the intended start).
  void Begin(int64_t origin_ns, int64_t now_ns);

  // Between Begin and the transaction's end (success or an error counted).
  bool active() const { return phase_ != Phase::kEnded; }
  bool connected() const { return phase_ == Phase::kExchanging; }
  // Bytes to send now; empty when nothing waits. Valid until the next call.
  absl::string_view unsent() const { return absl::string_view(send_buffer_).substr(send_offset_); }
  // Whether answers are awaited (a receive should be posted).
  bool wants_receive() const { return active() && !pending_.empty(); }
  // Whether it ended well (meaningful once !active()).
  bool succeeded() const { return succeeded_; }

  // The driver's reports. Each is ignored once the transaction has ended.
  void OnConnected(int error, int64_t now_ns);  // 0, or the connect's (or socket's) errno
  void OnSent(size_t bytes, int64_t now_ns);    // of unsent(), from its start
  void OnReceived(absl::string_view bytes, int64_t now_ns);
  void OnPeerClosed(int64_t now_ns);        // the server closed its side (recv 0)
  void OnError(int error, int64_t now_ns);  // a send or receive errno once connected
  void OnTimeout(int64_t now_ns);           // --timeout-ms passed
  // A layer between the socket and the machine (TLS, tls_exchange.h) failed: counted as
  // `kind`, with `reason` (static storage, may be null) among the reasons and `detail` kept
  // as a sample while fewer than max_samples are.
  void OnTransportFailed(ErrorKind kind, const char* reason, const std::string& detail,
                         int64_t now_ns);

 private:
  enum class Phase { kEnded, kConnecting, kExchanging };
  struct Pending {
    std::string request;
    int64_t sent_ns = 0;
  };

  void QueueQueries(int64_t now_ns);
  // Judges what has arrived: one unframed response, or every whole framed one.
  void JudgeUnframed(absl::string_view stream, bool closed, int64_t now_ns);
  void JudgeFramed(absl::string_view* stream, int64_t now_ns);
  void AnswerOne(size_t pending_index, int64_t now_ns);
  void Succeed(int64_t now_ns);
  void Fail(ErrorKind kind, int64_t now_ns);
  void FailMismatch(const CheckResult& result, int64_t now_ns);

  const ExchangeConfig* config_;
  RequestSource* requests_;
  ThreadStats* stats_;

  Phase phase_ = Phase::kEnded;
  bool succeeded_ = false;
  int64_t origin_ns_ = 0;
  int queued_ = 0;                // queries built on this connection
  int answered_ = 0;              // answers judged right
  std::vector<Pending> pending_;  // sent or queued, not answered; in send order
  std::vector<Pending> spare_;    // reused request buffers
  std::string send_buffer_;
  size_t send_offset_ = 0;
  std::string response_;  // bytes received and not yet judged
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_EXCHANGE_H_
