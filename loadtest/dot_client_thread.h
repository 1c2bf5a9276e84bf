// One client thread of --proto dot (DNS over TLS, RFC 7858) on its own epoll loop: each
// connection a non-blocking socket driven through a TlsExchange (TLS on memory BIOs over the
// DNS exchange, tls_exchange.h): connect -> ClientHello -> the server's flight -> Finished and
// the query in one send -> the answer(s) -> close_notify -> close. The schedule (closed or
// open loop), deadlines and publication are the epoll core's (client_thread.h); the TLS and
// DNS decisions are the state machine's, unit-tested without sockets.
#ifndef ONEPASS_LOADTEST_DOT_CLIENT_THREAD_H_
#define ONEPASS_LOADTEST_DOT_CLIENT_THREAD_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "loadtest/exchange.h"
#include "loadtest/load_config.h"
#include "loadtest/load_thread.h"
#include "loadtest/thread_stats.h"
#include "loadtest/tls_client_context.h"
#include "loadtest/tls_exchange.h"

namespace onepass::load {

class DotClientThread : public LoadThread {
 public:
  // `config.tls` must be set. `start_ns`: the common start of all threads; `stop`: SIGINT.
  DotClientThread(const LoadConfig& config, int index, int64_t start_ns,
                  const std::atomic<bool>* stop);
  ~DotClientThread() override;
  DotClientThread(const DotClientThread&) = delete;
  DotClientThread& operator=(const DotClientThread&) = delete;

  void Run() override;
  ThreadStats Snapshot() override;

 private:
  struct Slot {
    int fd = -1;
    uint32_t generation = 0;
    bool busy = false;  // from the start of a connection to its FinishIfEnded
    bool connecting = false;
    std::unique_ptr<TlsExchange> tls;
  };
  struct Deadline {
    int64_t when_ns;
    uint32_t slot;
    uint32_t generation;
  };

  void StartConnection(int64_t intended_ns, int64_t now_ns);
  void HandleEvent(uint32_t slot, uint32_t generation, uint32_t events, int64_t now_ns);
  void Flush(Slot& slot, int64_t now_ns);  // sends unsent() until EAGAIN
  void Receive(Slot& slot, int64_t now_ns);
  void FinishIfEnded(Slot& slot);  // the last send (close_notify), close, free the slot
  void Publish();

  const LoadConfig& config_;
  const int index_;
  const int64_t start_ns_;
  const std::atomic<bool>* stop_;

  ExchangeConfig exchange_config_;
  RequestSource requests_;
  TicketStore tickets_;
  int epoll_fd_ = -1;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::deque<Deadline> deadlines_;  // in start order: all share one timeout, so sorted
  int inflight_ = 0;
  size_t next_source_ = 0;
  std::vector<char> read_buffer_;

  ThreadStats stats_;  // owned by the running thread
  std::mutex published_mutex_;
  ThreadStats published_;  // guarded by published_mutex_
};

}  // namespace onepass::load

#endif  // ONEPASS_LOADTEST_DOT_CLIENT_THREAD_H_
