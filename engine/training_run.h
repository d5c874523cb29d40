#pragma once
// One training session's objects and its step, without any threading: the
// Trainer drives it from its thread, benchmarks and tests call it directly.
#include <ATen/core/Generator.h>
#include <c10/core/Device.h>

#include <atomic>
#include <memory>
#include <utility>
#include <optional>
#include <vector>

#include "engine/config.h"
#include "engine/custom_function_head.h"
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

// One model and the optimizer that updates it. A run has one; the multi-loss recipe two.
struct Trainee {
  Trainee();
  ~Trainee();  // out of line: Optimizer is only declared here
  Trainee(Trainee&&) noexcept;
  Trainee& operator=(Trainee&&) noexcept;

  std::string name;           // "A", "B"
  std::string module_prefix;  // before its module and parameter names: "", or "model_a." in multi-loss
  std::unique_ptr<Model> model;
  std::unique_ptr<CustomFunctionHead> head;  // the custom-function recipe's head, else null
  std::vector<at::Tensor> parameters;        // the model's, then the head's
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<LearningRateSchedule> schedule;

  at::Tensor forward(const at::Tensor& input) const;
  // Dotted names with the prefix ("model_b.hidden.0.weight"), the head's included.
  NamedTensors named_parameters() const;
};

class TrainingRun {
 public:
  // Validates the config, seeds, and builds data, model, optimizer and scaler.
  // Throws ConfigError, DataError or ModelError with a one-line message.
  explicit TrainingRun(const TrainConfig& config);
  ~TrainingRun();

  RunStartedEvent started_event() const;
  // Every trainee's parameters, named (Trainee::named_parameters).
  NamedTensors named_parameters() const;
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

  // A flag that, once true, makes step() and evaluate() throw StopRequested between
  // two batches: a stop must not wait for 10^8 micro-batches. Null: never stopped.
  void set_stop_flag(const std::atomic<bool>* flag) { stop_flag_ = flag; }

  c10::Device device() const { return device_; }
  // The first (or only) model and its optimizer.
  Model& model() { return *trainees_.front().model; }
  torch::optim::Optimizer& optimizer() { return *trainees_.front().optimizer; }
  const std::vector<Trainee>& trainees() const { return trainees_; }
  DataSource& data() { return *data_; }
  GradScaler& scaler() { return *scaler_; }

 private:
  at::Tensor compute_loss(const at::Tensor& output, const at::Tensor& target) const;
  // The multi-loss recipe's two losses from the two models' outputs.
  std::pair<at::Tensor, at::Tensor> multi_losses(const at::Tensor& out_a, const at::Tensor& out_b,
                                                 const at::Tensor& target) const;
  // The trainee's forward and loss under the run's autocast, in the forward phase.
  at::Tensor forward_loss(const Trainee& t, const at::Tensor& input, const at::Tensor& target) const;
  // One micro-batch's forward and backward in the recipe's pattern, the loss scaled and
  // divided by `micro_batches`; returns the unscaled loss (detached, fp32) it reports.
  at::Tensor forward_backward(const at::Tensor& input, const at::Tensor& target, int64_t micro_batches);
  at::Tensor forward_backward_multi_loss(const at::Tensor& input, const at::Tensor& target,
                                         int64_t micro_batches);
  at::Tensor forward_backward_gradient_penalty(const at::Tensor& input, const at::Tensor& target,
                                               int64_t micro_batches);
  // --inject-inf: one gradient element of model `model` (0 = A) set to +inf.
  void inject_inf_gradient(int64_t model);

  // Throws StopRequested once the stop flag is set.
  void check_stop() const;

  TrainConfig config_;
  const std::atomic<bool>* stop_flag_ = nullptr;
  c10::Device device_;
  std::optional<c10::ScalarType> autocast_dtype_;
  std::unique_ptr<DataSource> data_;
  std::vector<Trainee> trainees_;
  std::unique_ptr<GradScaler> scaler_;
  at::Generator data_generator_;
  int64_t consecutive_skips_ = 0;
  // The first step of the current run of non-finite losses; 0 when the last loss was finite.
  int64_t nonfinite_loss_since_ = 0;
};

}  // namespace ampscope::engine
