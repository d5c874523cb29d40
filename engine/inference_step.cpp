// TrainingRun::infer: one timed inference batch, for `ampscope compare --inference`.
#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <c10/core/InferenceMode.h>

#include <chrono>
#include <cmath>
#include <optional>

#include "engine/autocast_guard.h"
#include "engine/device.h"
#include "engine/training_run.h"

namespace ampscope::engine {

StepEvent TrainingRun::infer(int64_t batch_index) {
  using Clock = std::chrono::steady_clock;
  Batch batch = data_->sample_batch(config_.batch_size, data_generator_);
  const at::Tensor input = batch.input.to(device_);
  const at::Tensor target = batch.target.to(device_);
  // The copy (and anything queued before) is not part of the batch's latency.
  if (device_.is_cuda()) at::accelerator::synchronizeDevice(device_.index());
  trainees_.front().model->set_training(false);
  StepEvent event;
  event.step = batch_index;
  event.lr = 0.0;
  event.loss_scale = 1.0;
  event.grad_norm = std::nan("");
  try {
    c10::InferenceMode inference;
    std::optional<AutocastGuard> autocast;
    if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
    const auto started = Clock::now();
    const at::Tensor output = trainees_.front().forward(input);
    if (device_.is_cuda()) at::accelerator::synchronizeDevice(device_.index());
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    event.step_time_ms = seconds * 1e3;
    event.samples_per_second = seconds > 0.0 ? static_cast<double>(config_.batch_size) / seconds : 0.0;
    event.loss = compute_loss(output, target).to(at::kDouble).item<double>();
  } catch (...) {
    trainees_.front().model->set_training(true);
    throw;
  }
  trainees_.front().model->set_training(true);
  event.memory = sample_memory(device_);
  return event;
}

}  // namespace ampscope::engine
