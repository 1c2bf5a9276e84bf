#include "server/upstream/upstream_dispatch.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/core/deadline.h"

namespace onepass {

UpstreamDispatch::UpstreamDispatch(IoDriver* driver, const Clock* clock, size_t answer_bytes,
                                   AnswerSink* sink)
    : clock_(clock),
      sink_(sink),
      answer_(std::make_unique<OutputBuffer>(answer_bytes)),
      tick_(&driver->timers(), [this] { OnTick(); }) {}

UpstreamDispatch::~UpstreamDispatch() = default;

absl::StatusOr<std::unique_ptr<UpstreamDispatch>> UpstreamDispatch::Open(
    IoDriver* driver, const ForwardingSpec& spec, Handler& handler, WorkerStats* stats,
    const Clock* clock, size_t answer_bytes, AnswerSink* sink) {
  if (handler.forwarding() == nullptr) {
    return absl::InternalError("the handler forwards but has no forwarding half");
  }
  std::unique_ptr<UpstreamDispatch> dispatch(
      new UpstreamDispatch(driver, clock, answer_bytes, sink));
  UpstreamDispatch* self = dispatch.get();
  self->forwarding_ = handler.forwarding();
  self->tick_period_ = spec.tick_period;
  absl::StatusOr<std::unique_ptr<UpstreamChannel>> channel = UpstreamChannel::Open(
      driver, spec.upstreams, spec.datagrams, stats,
      [self](int index, absl::Span<const uint8_t> datagram) { self->OnDatagram(index, datagram); });
  if (!channel.ok()) return channel.status();
  self->channel_ = *std::move(channel);
  if (spec.streams.frame_length != nullptr) {
    self->channel_->OpenStreams(
        spec.upstreams, spec.streams,
        [self](int index, absl::Span<const uint8_t> frame) { self->OnStreamFrame(index, frame); });
  }
  self->tick_.ArmAt(After(clock->steady(), self->tick_period_));
  return dispatch;
}

void UpstreamDispatch::Flush() {
  if (!queue_.empty()) channel_->Send(queue_);
}

void UpstreamDispatch::SwapHandler(const HandlerFactory& factory, Handler& previous,
                                   Handler& next) {
  if (next.forwarding() == nullptr || previous.forwarding() == nullptr) return;
  // The new data's upstreams, index by index (HandlerFactory::ArrangeAfter kept the index of
  // each that stays): the sockets of one that stays stay open for the replies still due.
  const std::optional<ForwardingSpec> forwarding = factory.Forwarding();
  if (forwarding.has_value()) channel_->SetUpstreams(forwarding->upstreams);
  // Queries in flight to upstreams, their health and a cache survive the reload in the new
  // handler; what it cannot take (an upstream no longer listed) is answered now, before the
  // old handler goes, so no client waits for the backstop.
  next.forwarding()->TakeOver(*previous.forwarding());
  forwarding_ = next.forwarding();
  for (;;) {
    answer_->Clear();
    UpstreamAnswer answer;
    if (!previous.forwarding()->TakeAbandoned(clock_->wall(), *answer_, answer)) break;
    Deliver(answer);
  }
  Flush();
}

void UpstreamDispatch::OnDatagram(int index, absl::Span<const uint8_t> datagram) {
  answer_->Clear();
  const UpstreamAnswer answer =
      forwarding_->TakeUpstreamReply(index, datagram, clock_->wall(), *answer_);
  if (answer.resend_over_stream) channel_->SendStream(index, answer_->contents());
  Deliver(answer);
  Flush();
}

void UpstreamDispatch::OnStreamFrame(int index, absl::Span<const uint8_t> frame) {
  answer_->Clear();
  const UpstreamAnswer answer =
      forwarding_->TakeUpstreamStreamReply(index, frame, clock_->wall(), *answer_);
  Deliver(answer);
  Flush();
}

void UpstreamDispatch::OnTick() {
  const absl::Time now = clock_->wall();
  UpstreamAnswer answer;
  for (;;) {
    answer_->Clear();
    answer = UpstreamAnswer();
    if (!forwarding_->TakeExpired(now, *answer_, answer, queue_)) break;
    if (answer.resend_over_stream) channel_->SendStream(answer.upstream, answer_->contents());
    Deliver(answer);
  }
  Flush();  // health probes
  tick_.ArmAt(After(clock_->steady(), tick_period_));
}

}  // namespace onepass
