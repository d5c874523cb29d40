#pragma once
// A lock for the op observer's per-op critical sections: a few stores that the
// recording thread takes on every op, and another thread takes once a step.
// Uncontended, std::mutex costs two locked instructions and two calls (unlock must
// look for waiters); this costs one exchange and a plain store, which is what
// mattered on a launch-bound step (issue 27: pthread's lock and unlock were the
// observer's largest single cost after its own two callbacks). A waiter yields
// after a few tries, so a holder preempted on a busy machine gets the core back.
#include <atomic>
#include <thread>

namespace ampscope::profiler {

class SpinLock {
 public:
  void lock() noexcept {
    for (int tries = 0; locked_.exchange(true, std::memory_order_acquire); ++tries) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++tries > kSpinsBeforeYield) std::this_thread::yield();
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 64;
  std::atomic<bool> locked_{false};
};

}  // namespace ampscope::profiler
