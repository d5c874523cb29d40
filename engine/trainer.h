#pragma once
// Runs one training session in its own thread.
//
// Threads: the owner (CLI main thread or GUI thread) calls start/pause/resume/
// request_stop/wait; the training thread runs the loop, emits events into each
// subscriber's queue and calls the observers. Subscribers and observers are
// fixed before start(), so the training thread reads those lists without a lock.
// The only thing the training thread ever waits for is the pause gate.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/config.h"
#include "engine/events.h"
#include "engine/training_observer.h"

namespace ampscope::engine {

class Trainer {
 public:
  explicit Trainer(TrainConfig config);
  ~Trainer();  // requests a stop and joins
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Before start(): a queue that receives every event of the run.
  std::shared_ptr<EventQueue> subscribe(size_t capacity = 4096);
  // Before start(): an observer called on the training thread; not owned.
  void add_observer(TrainingObserver* observer);

  void start();
  void pause();
  void resume();
  // The run ends after the step in progress (or at once when paused).
  void request_stop();
  // Blocks the caller until the run has ended.
  void wait();

  RunState state() const { return state_.load(std::memory_order_acquire); }
  int64_t completed_steps() const { return completed_steps_.load(std::memory_order_acquire); }
  // Why the run failed; empty unless state() == kFailed. Valid after wait().
  std::string error_message() const;
  const TrainConfig& config() const { return config_; }

 private:
  // A failed host allocation as a user reads it: where, and which setting to lower.
  std::string out_of_host_memory(const std::string& size) const;
  void run();
  void run_loop();
  void set_state(RunState state, const std::string& message = {});
  void publish(const Event& event);
  // Returns false when the run should stop; waits while paused.
  bool pass_control_gate();

  TrainConfig config_;
  std::vector<std::shared_ptr<EventQueue>> subscribers_;
  std::vector<TrainingObserver*> observers_;
  std::thread thread_;
  std::atomic<RunState> state_{RunState::kIdle};
  std::atomic<int64_t> completed_steps_{0};
  bool prepared_ = false;  // data loaded and model built; the training thread's own
  std::atomic<bool> stop_requested_{false};

  mutable std::mutex control_mutex_;  // guards pause_requested_ and error_message_
  std::condition_variable control_changed_;
  bool pause_requested_ = false;
  std::string error_message_;
};

}  // namespace ampscope::engine
