#pragma once
// One training session's objects and its step, without any threading: the
// Trainer drives it from its thread, benchmarks and tests call it directly.
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <memory>
#include <optional>
#include <vector>

#include "engine/config.h"
#include "engine/data/data_source.h"
#include "engine/events.h"
#include "engine/grad_scaler.h"
#include "engine/models/model.h"
#include "engine/optim.h"
#include "engine/training_observer.h"

namespace torch::optim {
class Optimizer;
}

namespace ampscope::engine {

class TrainingRun {
 public:
  // Validates the config, seeds, and builds data, model, optimizer and scaler.
  // Throws ConfigError, DataError or ModelError with a one-line message.
  explicit TrainingRun(const TrainConfig& config);
  ~TrainingRun();

  RunStartedEvent started_event() const;
  // Runs optimizer step `step` (1-based) over config.accumulation_steps
  // micro-batches. Throws TrainingError when the run diverges.
  StepEvent step(int64_t step, const std::vector<TrainingObserver*>& observers = {});
  // Mean loss over `batches` batches in eval mode and inference mode, under the run's
  // autocast; the same batches on every call (their own generator, reseeded each time).
  // Leaves the model in training mode. Its ops are not recorded by op observers.
  double evaluate(int64_t batches);
  // One timed inference batch (`ampscope compare --inference`): the model in eval mode
  // under c10::InferenceMode and the run's autocast, as torch.inference_mode() with
  // torch.autocast runs it. A new batch each call, moved to the device before the clock
  // starts; the device is synchronised before it stops (CUDA). step_time_ms is the
  // batch's latency, samples_per_second the batch over it, loss the batch's loss
  // (computed after the clock stopped); no gradients, so grad_norm is NaN. Leaves the
  // model in training mode. (engine/inference_step.cpp)
  StepEvent infer(int64_t batch_index);

  c10::Device device() const { return device_; }
  Model& model() { return *model_; }
  DataSource& data() { return *data_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }
  GradScaler& scaler() { return *scaler_; }

 private:
  at::Tensor compute_loss(const at::Tensor& output, const at::Tensor& target) const;

  TrainConfig config_;
  c10::Device device_;
  std::optional<c10::ScalarType> autocast_dtype_;
  std::unique_ptr<DataSource> data_;
  std::unique_ptr<Model> model_;
  std::vector<at::Tensor> parameters_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<GradScaler> scaler_;
  std::unique_ptr<LearningRateSchedule> schedule_;
  at::Generator data_generator_;
  int64_t consecutive_skips_ = 0;
};

}  // namespace ampscope::engine
