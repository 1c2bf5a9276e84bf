#include "server/core/output_pool.h"

#include <utility>

namespace onepass {

OutputPool::OutputPool(size_t buffer_bytes, int max_kept)
    : buffer_bytes_(buffer_bytes), max_kept_(max_kept) {
  Replenish();
}

void OutputPool::Lend(Connection& connection) {
  if (!connection.has_output()) connection.GiveOutput(std::move(ready_));
}

void OutputPool::TakeBack(Connection& connection) {
  if (!connection.has_output()) return;
  std::unique_ptr<OutputBuffer> out = connection.TakeOutput();
  out->Clear();
  if (ready_ == nullptr) {
    ready_ = std::move(out);
  } else {
    spare_.push_back(std::move(out));
  }
}

bool OutputPool::Replenish() {
  if (ready_ != nullptr) return true;
  if (!spare_.empty()) {
    ready_ = std::move(spare_.back());
    spare_.pop_back();
    return true;
  }
  if (made_ > max_kept_) return false;
  ready_ = std::make_unique<OutputBuffer>(buffer_bytes_);
  ++made_;
  return true;
}

}  // namespace onepass
