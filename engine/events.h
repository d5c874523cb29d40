#pragma once
// What a training run tells its subscribers, and the queue that carries it.
// The training thread is the only producer of a queue; it never waits on a
// consumer: a full queue drops the event and counts the drop.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "engine/config.h"
#include "engine/device.h"

namespace ampscope::engine {

enum class RunState { kIdle, kRunning, kPaused, kFinished, kStopped, kFailed };
std::string_view to_string(RunState state);
inline bool is_terminal(RunState s) {
  return s == RunState::kFinished || s == RunState::kStopped || s == RunState::kFailed;
}

struct RunStartedEvent {
  TrainConfig config;
  std::string device;       // "cpu", "cuda:0"
  std::string model;        // Model::description()
  std::string data;         // DataSource::description()
  int64_t parameter_count = 0;
  bool scaler_enabled = false;
};

// One optimizer's part in a step. A step of the multi-loss recipe steps two optimizers under
// one GradScaler, and GradScaler decides per optimizer: one may skip while the other steps.
struct OptimizerOutcome {
  std::string name;            // the optimizer, and in multi-loss its model: "adamw (model B)"
  bool found_inf = false;      // an inf/NaN in this optimizer's own gradients (scaler on)
  bool skipped = false;        // its step() was skipped because of it
  int64_t unscale_calls = 0;   // explicit unscale_ calls (1 for the one clipped), 0 otherwise
  double lr = 0.0;
};

struct StepEvent {
  int64_t step = 0;                  // 1-based optimizer step
  double loss = 0.0;                 // unscaled, mean over the effective batch
  double lr = 0.0;
  double loss_scale = 1.0;           // the scale this step's backward used (1 without a scaler)
  bool found_inf = false;            // an inf/NaN gradient was found (scaler on)
  bool skipped = false;              // the optimizer step was skipped because of it
  int64_t growth_tracker = 0;        // successful steps since the last scale change, before update
  double grad_norm = 0.0;            // total L2 norm of the unscaled gradients (before clipping)
  double step_time_ms = 0.0;         // wall time of the whole step, device work included
  double samples_per_second = 0.0;   // effective batch / step time
  MemorySample memory;
  // Validation loss (TrainConfig::eval_every), after this step's update; NaN when the step
  // ran no validation. Its time is not part of step_time_ms.
  double eval_loss = std::numeric_limits<double>::quiet_NaN();
  // Every optimizer of the step, in a fixed order; found_inf/skipped above are any-of.
  std::vector<OptimizerOutcome> optimizers;
  // The scale after this step's update(), read for runs of several optimizers only (NaN otherwise).
  double loss_scale_after = std::numeric_limits<double>::quiet_NaN();
  // std::chrono::steady_clock (ns since its epoch) when the observers' work after the timed
  // step began (the gradient observers, then on_step_end), validation excluded; 0 where
  // the observers run inside step_time_ms. The profiler keeps its work from there beside
  // the step's time (StepRecord::capture_after_ms): it held the training as long.
  int64_t observers_from_ns = 0;
};

struct StateEvent {
  RunState state = RunState::kIdle;
  int64_t step = 0;          // the last completed step
  std::string message;       // why, for kFailed
};

using Event = std::variant<RunStartedEvent, StepEvent, StateEvent>;

// Bounded single-producer single-consumer ring.
class EventQueue {
 public:
  explicit EventQueue(size_t capacity);
  // Producer side. Returns false (and counts a drop) when the queue is full.
  bool try_push(Event event);
  // Consumer side: moves up to `max` events into `out`; returns how many.
  size_t drain(std::vector<Event>& out, size_t max = std::numeric_limits<size_t>::max());
  // Consumer side: waits until an event is there or the timeout passes.
  bool wait_for(std::chrono::milliseconds timeout);
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  size_t capacity() const { return slots_.size(); }

 private:
  std::vector<Event> slots_;
  // head_: next slot to read (consumer-owned); tail_: next slot to write (producer-owned).
  // Both only grow; slot = index % capacity.
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  std::atomic<uint64_t> dropped_{0};
  std::mutex wait_mutex_;  // only for wait_for's condition variable
  std::condition_variable ready_;
};

}  // namespace ampscope::engine
