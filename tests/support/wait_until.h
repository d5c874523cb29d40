#pragma once
// Waiting on a condition in tests: `pred` is checked until it holds, and false is
// returned once `bound` has passed. The bound only turns a hang into a failure;
// what a test waits for is the condition, never a duration. `poll` is the interval
// between checks (0: yield only, for conditions that are cheap to check).
#include <chrono>
#include <thread>

namespace ampscope::test {

template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds bound = std::chrono::seconds(30),
                std::chrono::milliseconds poll = std::chrono::milliseconds(0)) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (poll.count() > 0)
      std::this_thread::sleep_for(poll);
    else
      std::this_thread::yield();
  }
  return true;
}

}  // namespace ampscope::test
