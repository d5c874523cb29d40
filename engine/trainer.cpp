#include "engine/trainer.h"

#include <c10/util/Exception.h>
#if defined(__linux__)
#include <pthread.h>
#endif
#include <fmt/format.h>

#include "engine/data/load_stop.h"
#include "engine/device.h"
#include "engine/errors.h"
#include "engine/trainer_test_hooks.h"
#include "engine/training_run.h"

namespace ampscope::engine {

Trainer::Trainer(TrainConfig config) : config_(std::move(config)) {}

Trainer::~Trainer() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<EventQueue> Trainer::subscribe(size_t capacity) {
  if (thread_.joinable()) throw std::logic_error("Trainer::subscribe after start()");
  subscribers_.push_back(std::make_shared<EventQueue>(capacity));
  return subscribers_.back();
}

void Trainer::add_observer(TrainingObserver* observer) {
  if (thread_.joinable()) throw std::logic_error("Trainer::add_observer after start()");
  observers_.push_back(observer);
}

void Trainer::start() {
  if (thread_.joinable()) throw std::logic_error("Trainer::start called twice");
  state_.store(RunState::kRunning, std::memory_order_release);
  thread_ = std::thread([this] { run(); });
#if defined(__linux__)
  // Told apart from the profiler's threads in top -H, perf and gdb.
  (void)pthread_setname_np(thread_.native_handle(), "amp-train");
#endif
}

void Trainer::pause() {
  std::lock_guard lock(control_mutex_);
  pause_requested_ = true;
}

void Trainer::resume() {
  {
    std::lock_guard lock(control_mutex_);
    pause_requested_ = false;
  }
  control_changed_.notify_all();
}

void Trainer::request_stop() {
  {
    // Under the mutex: the pause gate reads the flag and starts waiting with the
    // mutex held, so a stop stored between the two (without the mutex) would
    // notify nobody and leave a paused run waiting forever.
    std::lock_guard lock(control_mutex_);
    stop_requested_.store(true, std::memory_order_release);
  }
  control_changed_.notify_all();
}

void Trainer::wait() {
  if (thread_.joinable()) thread_.join();
}

std::string Trainer::error_message() const {
  std::lock_guard lock(control_mutex_);
  return error_message_;
}

void Trainer::publish(const Event& event) {
  for (auto& queue : subscribers_) queue->try_push(event);
}

void Trainer::set_state(RunState state, const std::string& message) {
  state_.store(state, std::memory_order_release);
  publish(StateEvent{state, completed_steps_.load(std::memory_order_relaxed), message});
}

bool Trainer::pass_control_gate() {
  std::unique_lock lock(control_mutex_);
  if (pause_requested_ && !stop_requested_.load(std::memory_order_acquire)) {
    lock.unlock();
    set_state(RunState::kPaused);
    lock.lock();
    // wait(lock, predicate) written out, so that a test can widen the window
    // between the check and the wait (trainer_test_hooks.h).
    while (pause_requested_ && !stop_requested_.load(std::memory_order_acquire)) {
      if (auto* hook = test_hooks::pause_gate_before_wait.load(std::memory_order_acquire)) hook();
      control_changed_.wait(lock);
    }
    if (!stop_requested_.load(std::memory_order_acquire)) {
      lock.unlock();
      set_state(RunState::kRunning);
      lock.lock();
    }
  }
  return !stop_requested_.load(std::memory_order_acquire);
}

void Trainer::run() {
  RunState final_state = RunState::kFinished;
  std::string message;
  try {
    run_loop();
    if (stop_requested_.load() && completed_steps_.load() < config_.steps) final_state = RunState::kStopped;
  } catch (const StopRequested&) {
    final_state = RunState::kStopped;  // while the data loaded, before the run started
  } catch (const EngineError& e) {
    final_state = RunState::kFailed;
    message = e.what();
  } catch (const c10::OutOfMemoryError& e) {
    final_state = RunState::kFailed;
    message = fmt::format("out of memory at step {}: {} (lower --batch-size or the model size)",
                          completed_steps_.load() + 1, first_line(e.what_without_backtrace()));
  } catch (const c10::Error& e) {
    final_state = RunState::kFailed;
    const std::string what = first_line(e.what_without_backtrace());
    message = is_allocation_failure(what) ? out_of_host_memory(requested_size(what))
                                          : fmt::format("LibTorch error at step {}: {}", completed_steps_.load() + 1, what);
  } catch (const std::bad_alloc&) {
    final_state = RunState::kFailed;
    message = out_of_host_memory("");
  } catch (const std::exception& e) {
    final_state = RunState::kFailed;
    message = e.what();
  }
  {
    std::lock_guard lock(control_mutex_);
    error_message_ = message;
  }
  for (auto* o : observers_) {
    try {
      o->on_run_end(final_state, message);
    } catch (const std::exception&) {
      // An observer failing at the end must not hide the run's own outcome.
    }
  }
  set_state(final_state, message);
}

std::string Trainer::out_of_host_memory(const std::string& size) const {
  if (!prepared_)
    return fmt::format("out of memory before the first step, loading the data or building the model{}; {}", size,
                       model_size_advice(config_.model.kind));
  return fmt::format("out of memory at step {}{}; lower --batch-size, or the model's size ({})",
                     completed_steps_.load() + 1, size, model_size_advice(config_.model.kind));
}

void Trainer::run_loop() {
  // Loading the data (a file read whole and parsed) stops too: StopRequested, caught by run().
  const data::LoadStopScope loading(&stop_requested_);
  TrainingRun run(config_);
  run.set_stop_flag(&stop_requested_);
  prepared_ = true;
  const RunStartedEvent started = run.started_event();
  for (auto* o : observers_) o->on_run_start(started);
  if (!observers_.empty()) {
    const NamedTensors parameters = run.named_parameters();
    for (auto* o : observers_) o->on_parameters(parameters);
  }
  publish(started);
  for (int64_t step = 1; step <= config_.steps; ++step) {
    if (!pass_control_gate()) return;
    StepEvent event;
    try {
      event = run.step(step, observers_);
    } catch (const StopRequested&) {
      return;  // the step was not finished: the run stopped after the previous one
    }
    completed_steps_.store(step, std::memory_order_release);
    publish(event);
  }
}

}  // namespace ampscope::engine
