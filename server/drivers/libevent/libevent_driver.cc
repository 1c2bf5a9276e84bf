#include "server/drivers/libevent/libevent_driver.h"

#include <event2/event.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

#include "absl/time/time.h"
#include "common/libevent_free.h"
#include "server/core/socket_options.h"

namespace onepass {

absl::StatusOr<std::unique_ptr<LibeventDriver>> LibeventDriver::Create(
    TimerQueue* timers, std::vector<ScopedFd> listeners, int accept_burst, int backlog) {
  std::unique_ptr<LibeventDriver> driver(
      new LibeventDriver(timers, std::move(listeners), accept_burst, backlog));
  // One event_base per worker thread, used by that thread only: no locking (libevent_core).
  std::unique_ptr<event_config, void (*)(event_config*)> config(event_config_new(),
                                                                event_config_free);
  if (config == nullptr) return absl::ResourceExhaustedError("event_config_new failed");
  event_config_set_flag(config.get(), EVENT_BASE_FLAG_NOLOCK);
  driver->base_.reset(event_base_new_with_config(config.get()));
  if (driver->base_ == nullptr) return absl::ResourceExhaustedError("event_base_new failed");
  driver->wake_timer_.reset(evtimer_new(driver->base_.get(), &LibeventDriver::OnWake, nullptr));
  if (driver->wake_timer_ == nullptr) {
    return absl::ResourceExhaustedError("cannot create the worker's timer event");
  }
  for (const ScopedFd& listener : driver->listeners_) {
    driver->accept_events_.emplace_back(
        event_new(driver->base_.get(), listener.get(), EV_READ | EV_PERSIST,
                  &LibeventDriver::OnAcceptable, driver.get()),
        FreeEvent);
    if (driver->accept_events_.back() == nullptr) {
      return absl::ResourceExhaustedError("cannot create an accept event");
    }
  }
  return driver;
}

LibeventDriver::LibeventDriver(TimerQueue* timers, std::vector<ScopedFd> listeners,
                               int accept_burst, int backlog)
    : IoDriver(timers),
      accept_burst_(accept_burst),
      backlog_(backlog),
      listeners_(std::move(listeners)),
      base_(nullptr, FreeBase),
      wake_timer_(nullptr, FreeEvent) {}

LibeventDriver::~LibeventDriver() {
  accept_events_.clear();
  wake_timer_.reset();
}

void LibeventDriver::Arm(FdWatch& watch) {
  event* ev = static_cast<event*>(watch.driver_data);
  if (ev == nullptr) {
    // Once per watch (a pooled connection's lives as long as the pool): steady state allocates
    // nothing.
    ev = event_new(base_.get(), -1, 0, &LibeventDriver::OnWatchReady, &watch);
    watch.driver_data = ev;
  }
  // A watch whose user disarms it before closing its fd stays registered after a one-shot
  // fire (EV_PERSIST, the one-shot kept by FdWatch::Fire and OnWatchReady): armed again for the
  // same fd and interest, as a kept-open connection is after each answer, it costs no
  // epoll_ctl (libevent would DEL at the fire and ADD now).
  const bool keep = watch.persistent() || watch.disarms_before_close();
  const short what = static_cast<short>(
      (watch.interest() == Interest::kReadable ? EV_READ : EV_WRITE) | (keep ? EV_PERSIST : 0));
  if (event_pending(ev, EV_READ | EV_WRITE, nullptr) != 0) {
    if (event_get_fd(ev) == watch.fd() && event_get_events(ev) == what) return;
    event_del(ev);  // another fd or interest; event_assign must not see an added event
  }
  event_assign(ev, base_.get(), watch.fd(), what, &LibeventDriver::OnWatchReady, &watch);
  event_add(ev, nullptr);
}

void LibeventDriver::Disarm(FdWatch& watch) {
  if (watch.driver_data != nullptr) event_del(static_cast<event*>(watch.driver_data));
}

void LibeventDriver::Forget(FdWatch& watch) {
  if (watch.driver_data != nullptr) event_free(static_cast<event*>(watch.driver_data));
  watch.driver_data = nullptr;
}

void LibeventDriver::OnWatchReady(int, short, void* arg) {
  FdWatch* watch = static_cast<FdWatch*>(arg);
  if (!watch->armed()) {
    // Still registered after its one-shot fired, and not armed again: the fd is ready, but
    // nobody asked; the registration goes now (what libevent would have done at the fire).
    event_del(static_cast<event*>(watch->driver_data));
    return;
  }
  watch->Fire();
}

void LibeventDriver::CloseSocket(int fd, bool abort) {
  if (abort) AbortOnClose(fd);
  close(fd);
}

void LibeventDriver::SetAccepting(bool on) {
  if (on == accepting_) return;
  for (auto& accept_event : accept_events_) {
    if (on) {
      event_add(accept_event.get(), nullptr);
    } else {
      event_del(accept_event.get());
    }
  }
  accepting_ = on;
}

void LibeventDriver::OnAcceptable(int fd, short, void* arg) {
  LibeventDriver* driver = static_cast<LibeventDriver*>(arg);
  driver->AcceptBurst(driver->ListenerIndex(fd), driver->accept_burst_);
}

int LibeventDriver::ListenerIndex(int fd) const {
  // A handful of listeners per worker, looked up once per burst, not per connection.
  for (size_t i = 0; i < listeners_.size(); ++i) {
    if (listeners_[i].get() == fd) return static_cast<int>(i);
  }
  return 0;
}

void LibeventDriver::AcceptBurst(int index, int limit) {
  AcceptQueued(listeners_[index].get(), index, limit,
               [this](int fd, const sockaddr_storage& address, int listener) {
                 sink_->ServeAccepted(fd, address, listener);
               });
  // The burst is spent; the listener is level-triggered, so the rest waits for the next turn.
}

void LibeventDriver::CloseListeners(bool take_queued) {
  SetAccepting(false);
  if (take_queued) {
    for (size_t i = 0; i < listeners_.size(); ++i) AcceptBurst(static_cast<int>(i), backlog_);
  }
  accept_events_.clear();
  listeners_.clear();
  sink_->OnListenersClosed();
}

std::vector<int> LibeventDriver::listener_fds() const {
  std::vector<int> fds;
  for (const ScopedFd& listener : listeners_) fds.push_back(listener.get());
  return fds;
}

void LibeventDriver::AdoptListenersIntoThisTable() {
  for (ScopedFd& listener : listeners_) listener.AdoptIntoThisTable();
}

void LibeventDriver::OnWake(int, short, void*) {}  // only ends the wait: Run fires the timers

void LibeventDriver::RunOnce() {
  event_base_loop(base_.get(), EVLOOP_ONCE | EVLOOP_NONBLOCK);
  timers().RunExpired(std::chrono::steady_clock::now());
}

absl::Status LibeventDriver::Run() {
  while (!stopping_) {
    if (const std::optional<SteadyTime> next = timers().Next(); next.has_value()) {
      const auto wait = std::max(*next - std::chrono::steady_clock::now(),
                                 std::chrono::steady_clock::duration::zero());
      const timeval tv = absl::ToTimeval(absl::FromChrono(wait));
      evtimer_add(wake_timer_.get(), &tv);
    } else {
      evtimer_del(wake_timer_.get());
    }
    if (event_base_loop(base_.get(), EVLOOP_ONCE) < 0) {
      return absl::InternalError("the worker's event loop failed (event_base_loop)");
    }
    timers().RunExpired(std::chrono::steady_clock::now());
  }
  return absl::OkStatus();
}

}  // namespace onepass
