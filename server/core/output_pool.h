// A worker's output buffers, lent to connections turn by turn (docs/design.md "Limits, and
// why"). The single pass owns none: it uses the pool's ready buffer. A parked connection
// waiting for a request holds none either; it is lent one for each turn and gives it back
// unless a response is left in it (kWriting), in which case the pool readies another, within
// its bound. So a crowd of slow clients pins input buffers only, and the buffers in use never
// exceed the parked connections that are writing, plus one.
//
// Thread-confined to its worker. Allocates only until it has seen its peak.
#ifndef ONEPASS_SERVER_CORE_OUTPUT_POOL_H_
#define ONEPASS_SERVER_CORE_OUTPUT_POOL_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "handlers/output_buffer.h"
#include "server/core/connection.h"

namespace onepass {

class OutputPool {
 public:
  // Buffers of `buffer_bytes`; at most `max_kept` held by connections that wait to write
  // (the worker's --max-connections share), plus the ready one.
  OutputPool(size_t buffer_bytes, int max_kept);
  OutputPool(const OutputPool&) = delete;
  OutputPool& operator=(const OutputPool&) = delete;

  size_t buffer_bytes() const { return buffer_bytes_; }
  // `connection` gets the ready buffer for a turn, unless it holds one already. Requires
  // ready() (Replenish after a connection kept one).
  void Lend(Connection& connection);
  // After a turn: `connection`'s buffer (if any) comes back, cleared.
  void TakeBack(Connection& connection);
  // Whether a connection may keep the buffer it was lent (it waits to write) and the pool
  // still ready one for the next turn.
  bool CanKeepOne() const { return !spare_.empty() || made_ <= max_kept_; }
  // After a connection kept its buffer: readies another. False when the bound is reached.
  bool Replenish();
  bool ready() const { return ready_ != nullptr; }

 private:
  const size_t buffer_bytes_;
  const int max_kept_;
  std::unique_ptr<OutputBuffer> ready_;  // the next turn's (the single pass's)
  std::vector<std::unique_ptr<OutputBuffer>> spare_;
  int made_ = 0;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_CORE_OUTPUT_POOL_H_
