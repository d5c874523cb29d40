#include "engine/events.h"

#include <stdexcept>

namespace ampscope::engine {

std::string_view to_string(RunState state) {
  switch (state) {
    case RunState::kIdle: return "idle";
    case RunState::kRunning: return "running";
    case RunState::kPaused: return "paused";
    case RunState::kFinished: return "finished";
    case RunState::kStopped: return "stopped";
    case RunState::kFailed: return "failed";
  }
  return "unknown";
}

EventQueue::EventQueue(size_t capacity) : slots_(capacity) {
  if (capacity == 0) throw std::invalid_argument("EventQueue capacity must be > 0");
}

bool EventQueue::try_push(Event event) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  if (tail - head_.load(std::memory_order_acquire) >= slots_.size()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  slots_[tail % slots_.size()] = std::move(event);
  tail_.store(tail + 1, std::memory_order_release);
  // notify without the mutex: a consumer that misses it wakes at its timeout.
  ready_.notify_one();
  return true;
}

size_t EventQueue::drain(std::vector<Event>& out, size_t max) {
  uint64_t head = head_.load(std::memory_order_relaxed);
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  size_t n = 0;
  while (head != tail && n < max) {
    out.push_back(std::move(slots_[head % slots_.size()]));
    ++head;
    ++n;
  }
  head_.store(head, std::memory_order_release);
  return n;
}

bool EventQueue::wait_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(wait_mutex_);
  return ready_.wait_for(lock, timeout, [&] {
    return tail_.load(std::memory_order_acquire) != head_.load(std::memory_order_relaxed);
  });
}

}  // namespace ampscope::engine
