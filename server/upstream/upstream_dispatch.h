// One worker's upstreams for a forwarding handler (the core's Forwarder,
// server/core/forwarder.h): the channel of UDP ports and TCP streams (upstream_channel.h), the
// handler's forwarding half fed with every datagram and frame that comes back and, every tick,
// the time (expiry, health probes), and each answer it renders delivered to the core.
// Thread-confined to its worker; made by start-up (server/worker.cc) when the handler forwards.
#ifndef ONEPASS_SERVER_UPSTREAM_UPSTREAM_DISPATCH_H_
#define ONEPASS_SERVER_UPSTREAM_UPSTREAM_DISPATCH_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "handlers/forwarding.h"
#include "handlers/handler.h"
#include "handlers/output_buffer.h"
#include "server/core/clock.h"
#include "server/core/forwarder.h"
#include "server/core/io_driver.h"
#include "server/core/stats.h"
#include "server/core/timer_queue.h"
#include "server/upstream/upstream_channel.h"

namespace onepass {

class UpstreamDispatch final : public Forwarder {
 public:
  // The upstreams of `spec` (a wrong address fails here), watched through `driver`, for
  // `handler`'s forwarding half; answers up to `answer_bytes` go to `sink`. `clock` is the
  // core's (expiry is judged by its wall clock). All outlive the dispatch.
  static absl::StatusOr<std::unique_ptr<UpstreamDispatch>> Open(
      IoDriver* driver, const ForwardingSpec& spec, Handler& handler, WorkerStats* stats,
      const Clock* clock, size_t answer_bytes, AnswerSink* sink);
  ~UpstreamDispatch() override;

  // Forwarder.
  UpstreamQueue& queue() override { return queue_; }
  void Flush() override;
  void SwapHandler(const HandlerFactory& factory, Handler& previous, Handler& next) override;

 private:
  UpstreamDispatch(IoDriver* driver, const Clock* clock, size_t answer_bytes, AnswerSink* sink);
  void OnDatagram(int index, absl::Span<const uint8_t> datagram);
  void OnStreamFrame(int index, absl::Span<const uint8_t> frame);
  void OnTick();
  void Deliver(const UpstreamAnswer& answer) {
    if (answer.matched) sink_->DeliverUpstream(answer, answer_->contents());
  }

  const Clock* const clock_;
  AnswerSink* const sink_;
  ForwardingHandler* forwarding_ = nullptr;  // the current handler's
  std::unique_ptr<UpstreamChannel> channel_;
  // The answer the handler renders for one upstream reply or expiry, then copied to the
  // connection's output.
  std::unique_ptr<OutputBuffer> answer_;
  // 1 MiB: what the core's connections and the tick queue (handlers/forwarding.h).
  UpstreamQueue queue_;
  absl::Duration tick_period_;  // ForwardingSpec::tick_period
  Timer tick_;
};

}  // namespace onepass

#endif  // ONEPASS_SERVER_UPSTREAM_UPSTREAM_DISPATCH_H_
