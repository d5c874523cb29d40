#pragma once
// In-process hooks into the training loop, for the profiler. Called on the
// training thread between the loop's own work, so an observer must be quick and
// must never wait on a UI; the events (events.h) are the way to reach a UI.
#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "engine/events.h"

namespace ampscope::engine {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  virtual void on_run_start(const RunStartedEvent& run) {}
  // The model's trainable parameters, named by their modules' paths, once after
  // on_run_start: they live as long as the run.
  virtual void on_parameters(const NamedTensors& parameters) {}
  virtual void on_step_begin(int64_t step) {}
  // Asked once a step, before the gradients are handed out; keep it cheap.
  virtual bool wants_gradients(int64_t step) { return false; }
  // The parameters with their unscaled gradients (param.grad()), before clipping
  // and before the optimizer step; loss_scale is the scale the backward used.
  virtual void on_unscaled_gradients(int64_t step, const NamedTensors& parameters,
                                     double loss_scale) {}
  virtual void on_step_end(const StepEvent& step) {}
  virtual void on_run_end(RunState final_state, const std::string& message) {}
};

}  // namespace ampscope::engine
