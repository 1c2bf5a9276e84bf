#include "server/core/timer_queue.h"

#include <utility>

namespace onepass {

void Timer::ArmAt(SteadyTime at) {
  at_ = at;
  if (armed()) {
    queue_->Update(this);
  } else {
    queue_->Insert(this);
  }
}

void Timer::Cancel() {
  if (armed()) queue_->Remove(this);
}

std::optional<SteadyTime> TimerQueue::Next() const {
  if (heap_.empty()) return std::nullopt;
  return heap_.front()->at_;
}

void TimerQueue::RunExpired(SteadyTime now, size_t limit) {
  for (size_t fired = 0; fired < limit && !heap_.empty() && heap_.front()->at_ <= now; ++fired) {
    Timer* timer = heap_.front();
    Remove(timer);
    // Last: the callback may destroy the timer's owner, or arm the timer again.
    timer->on_expiry_();
  }
}

void TimerQueue::Insert(Timer* timer) {
  heap_.push_back(timer);
  timer->index_ = heap_.size() - 1;
  SiftUp(timer->index_);
}

void TimerQueue::Remove(Timer* timer) {
  const size_t index = timer->index_;
  timer->index_ = Timer::kNotQueued;
  Timer* last = heap_.back();
  heap_.pop_back();
  if (last == timer) return;
  Place(last, index);
  Update(last);
}

void TimerQueue::Update(Timer* timer) {
  const size_t index = timer->index_;
  if (index > 0 && timer->at_ < heap_[(index - 1) / 2]->at_) {
    SiftUp(index);
  } else {
    SiftDown(index);
  }
}

void TimerQueue::SiftUp(size_t index) {
  Timer* timer = heap_[index];
  while (index > 0) {
    const size_t parent = (index - 1) / 2;
    if (!(timer->at_ < heap_[parent]->at_)) break;
    Place(heap_[parent], index);
    index = parent;
  }
  Place(timer, index);
}

void TimerQueue::SiftDown(size_t index) {
  Timer* timer = heap_[index];
  const size_t size = heap_.size();
  for (;;) {
    size_t child = 2 * index + 1;
    if (child >= size) break;
    if (child + 1 < size && heap_[child + 1]->at_ < heap_[child]->at_) ++child;
    if (!(heap_[child]->at_ < timer->at_)) break;
    Place(heap_[child], index);
    index = child;
  }
  Place(timer, index);
}

}  // namespace onepass
