#include "engine/training_run.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/record_function.h>
#include <c10/core/InferenceMode.h>
#include <torch/optim/optimizer.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>

#include "engine/autocast_guard.h"
#include "engine/device.h"
#include "engine/errors.h"
#include "engine/module_scope.h"

namespace ampscope::engine {
namespace {

std::vector<at::Tensor> defined_grads(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  return grads;
}

// Total L2 norm of the gradients, computed as torch.nn.utils.clip_grad_norm_
// does (foreach norms, then the norm of the norms), left on the device.
at::Tensor total_grad_norm(const std::vector<at::Tensor>& grads, c10::Device device) {
  if (grads.empty()) return at::zeros({}, at::TensorOptions().device(device).dtype(at::kFloat));
  const auto norms = at::_foreach_norm(grads, 2);
  return at::linalg_vector_norm(at::stack(norms).to(at::kFloat), 2);
}

// Scales the gradients so their total norm is at most max_norm, without a host
// sync: the clamp happens on the device, as in PyTorch's foreach implementation.
// Returns the coefficient applied (a device scalar), undefined when there were no gradients.
at::Tensor clip_grads_(std::vector<at::Tensor>& grads, const at::Tensor& total_norm, double max_norm) {
  if (grads.empty()) return {};
  const at::Tensor coefficient = at::clamp_max(max_norm / (total_norm + 1e-6), 1.0);
  at::_foreach_mul_(grads, coefficient);
  return coefficient;
}

// Refuses what would not fit in the host memory left now, naming the settings to lower.
void require_memory(double bytes, const std::string& what, ModelKind model) {
  const int64_t available = available_host_memory_bytes();
  if (available < 0 || bytes <= static_cast<double>(available)) return;
  throw TrainingError(fmt::format("out of memory: {} need {} but only {} of memory is free; {}", what,
                                  format_bytes(bytes), format_bytes(static_cast<double>(available)),
                                  model_size_advice(model)));
}

}  // namespace

TrainingRun::TrainingRun(const TrainConfig& config)
    : config_(config), device_(c10::kCPU), autocast_dtype_(autocast_dtype(config.precision)) {
  validate(config_);
  device_ = resolve_device(config_.device);
  // Set on every run: the flags are process-wide and the previous run (a comparison
  // runs several in one process) may have changed them. Matmuls follow the run's
  // precision (tf32 or strict fp32); cuDNN keeps PyTorch's default
  // (torch.backends.cudnn.allow_tf32 = True), so "fp32" convolutions run as users'
  // own fp32 training runs them.
  at::globalContext().setAllowTF32CuBLAS(config_.allow_tf32);
  at::globalContext().setAllowTF32CuDNN(true);
  torch::manual_seed(config_.seed);
  data_generator_ = at::make_generator<at::CPUGeneratorImpl>(config_.seed + 0x9E3779B97F4A7C15ULL);
  data_ = make_data_source(config_.data, config_.model, config_.seed);
  require_memory(estimated_weight_bytes(config_.model, data_->spec()), "the model's weights", config_.model.kind);
  model_ = make_model(config_.model, data_->spec());
  model_->to(device_);
  model_->set_training(true);
  parameters_ = model_->parameters();
  if (parameters_.empty()) throw ModelError("the model has no trainable parameters");
  if (device_.is_cpu()) {
    // Gradients and the optimizer's state (momentum; Adam's two moments) come at the first
    // step, one fp32 copy of the weights each: refused now rather than OOM-killed then.
    const int64_t states = config_.optim.kind == OptimizerKind::kSGD ? (config_.optim.momentum != 0 ? 1 : 0) : 2;
    require_memory(4.0 * static_cast<double>(model_->parameter_count()) * static_cast<double>(1 + states),
                   fmt::format("its gradients and {} state", to_string(config_.optim.kind)), config_.model.kind);
  }
  optimizer_ = make_optimizer(config_.optim, parameters_);
  scaler_ = std::make_unique<GradScaler>(config_.scaler, device_, config_.scaler_enabled());
  schedule_ = std::make_unique<LearningRateSchedule>(config_.optim, config_.steps);
  reset_peak_memory(device_);
}

TrainingRun::~TrainingRun() = default;

RunStartedEvent TrainingRun::started_event() const {
  RunStartedEvent e;
  e.config = config_;
  e.device = device_name(device_);
  e.model = model_->description();
  e.data = data_->description();
  e.parameter_count = model_->parameter_count();
  e.scaler_enabled = scaler_->enabled();
  return e;
}

at::Tensor TrainingRun::compute_loss(const at::Tensor& output, const at::Tensor& target) const {
  // A user's model (TorchScript) may not fit the data: said in its terms, not the loss's.
  const SampleSpec& spec = data_->spec();
  const bool sequences = spec.task == TaskKind::kLanguageModel;
  const int64_t width = spec.task == TaskKind::kRegression ? spec.target_dim : spec.num_classes;
  if (output.dim() != (sequences ? 3 : 2) || output.size(-1) != width) {
    const std::string sizes = fmt::format("[{}]", fmt::join(output.sizes(), ", "));
    throw ModelError(fmt::format(
        "the model's output is {} but the data has {} {}: its last layer must give {}", sizes, width,
        spec.task == TaskKind::kRegression ? "targets" : sequences ? "token kinds" : "classes",
        sequences ? fmt::format("[batch, tokens, {}]", width) : fmt::format("[batch, {}]", width)));
  }
  switch (spec.task) {
    case TaskKind::kClassification: return at::cross_entropy_loss(output, target);
    case TaskKind::kLanguageModel:
      return at::cross_entropy_loss(output.reshape({-1, output.size(-1)}), target.reshape({-1}));
    case TaskKind::kRegression: return at::mse_loss(output, target);
  }
  throw ModelError("unknown task");
}

StepEvent TrainingRun::step(int64_t step, const std::vector<TrainingObserver*>& observers) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  for (auto* o : observers) o->on_step_begin(step);

  const double lr = schedule_->apply(*optimizer_, step - 1);
  optimizer_->zero_grad(/*set_to_none=*/true);
  const int64_t micro_batches = config_.accumulation_steps;
  at::Tensor loss_sum;
  for (int64_t micro = 0; micro < micro_batches; ++micro) {
    Batch batch = data_->sample_batch(config_.batch_size, data_generator_);
    const at::Tensor input = batch.input.to(device_, /*non_blocking=*/true);
    const at::Tensor target = batch.target.to(device_, /*non_blocking=*/true);
    at::Tensor loss;
    {
      // Forward and loss inside the autocast region, backward outside (as PyTorch recommends).
      PhaseScope phase(kPhaseForward);
      std::optional<AutocastGuard> autocast;
      if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
      const at::Tensor output = model_->forward(input);
      loss = compute_loss(output, target);
    }
    {
      PhaseScope phase(kPhaseBackward);
      // Each micro-batch contributes 1/N so the accumulated gradient is the effective batch's mean.
      const at::Tensor scaled =
          scaler_->scale(micro_batches > 1 ? loss / static_cast<double>(micro_batches) : loss);
      scaled.backward();
    }
    const at::Tensor detached = loss.detach().to(at::kFloat);
    loss_sum = loss_sum.defined() ? loss_sum + detached : detached;
  }

  StepEvent event;
  event.step = step;
  event.lr = lr;
  std::vector<at::Tensor> grads;
  at::Tensor clip_coefficient;
  {
    PhaseScope phase(kPhaseOptimizer);
    // Unscale once, at effective-batch granularity, so the norm, clipping and
    // observers all see true gradients.
    const at::Tensor scale_used = scaler_->enabled() ? scaler_->scale_tensor().clone() : at::Tensor();
    scaler_->unscale_(*optimizer_);
    grads = defined_grads(parameters_);
    const at::Tensor norm = total_grad_norm(grads, device_);
    // One device-to-host transfer for everything the event reports.
    std::vector<at::Tensor> readings = {(loss_sum / static_cast<double>(micro_batches)).reshape({1}),
                                        norm.to(loss_sum.device()).to(at::kFloat).reshape({1})};
    if (scaler_->enabled()) {
      readings.push_back(scale_used.to(at::kFloat).reshape({1}));
      readings.push_back(scaler_->growth_tracker_tensor().to(at::kFloat).reshape({1}));
    }
    // The optimizer sees the gradients after clipping; observers see them before.
    if (config_.clip_grad_norm > 0.0) clip_coefficient = clip_grads_(grads, norm, config_.clip_grad_norm);
    // Read back before step(): its found-inf check then finds the device idle.
    const at::Tensor host = at::cat(readings).to(at::kDouble).cpu();
    const bool stepped = scaler_->step(*optimizer_);
    const double* values = host.const_data_ptr<double>();
    event.loss = values[0];
    event.grad_norm = values[1];
    event.loss_scale = scaler_->enabled() ? values[2] : 1.0;
    event.growth_tracker = scaler_->enabled() ? static_cast<int64_t>(values[3]) : 0;
    event.found_inf = scaler_->enabled() && scaler_->last_step_found_inf();
    event.skipped = !stepped;
    scaler_->update();
  }
  // The step's time includes its device work.
  if (device_.is_cuda()) at::accelerator::synchronizeDevice(device_.index());
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  event.step_time_ms = seconds * 1e3;
  event.samples_per_second =
      seconds > 0.0 ? static_cast<double>(config_.batch_size * micro_batches) / seconds : 0.0;
  event.memory = sample_memory(device_);
  if (config_.eval_every > 0 && step % config_.eval_every == 0) event.eval_loss = evaluate(config_.eval_batches);

  // Gradient observers (the profiler's range statistics) run after the timed step,
  // on the idle device, so their work is neither in the step time nor in the
  // step's GPU trace. The optimizer does not touch .grad, so they still hold the
  // unscaled gradients; clipping is undone first so observers see them unclipped.
  bool wants = false;
  for (auto* o : observers) wants = o->wants_gradients(step) || wants;
  if (wants) {
    if (clip_coefficient.defined()) at::_foreach_div_(grads, clip_coefficient);
    const auto named = model_->named_parameters();
    for (auto* o : observers)
      if (o->wants_gradients(step)) o->on_unscaled_gradients(step, named, event.loss_scale);
  }

  if (!scaler_->enabled() && !std::isfinite(event.loss)) {
    throw TrainingError(fmt::format(
        "the loss became {} at step {} in {} without a loss scaler: the run diverged "
        "(lower --lr, or set --clip-grad-norm)",
        std::isnan(event.loss) ? "NaN" : "infinite", step, to_string(config_.precision)));
  }
  consecutive_skips_ = event.skipped ? consecutive_skips_ + 1 : 0;
  if (consecutive_skips_ >= config_.max_consecutive_skips) {
    throw TrainingError(fmt::format(
        "{} consecutive steps had inf/NaN gradients (loss scale now {:g}): the run diverged "
        "(lower --lr, or check the model for overflow in fp32 too)",
        consecutive_skips_, scaler_->scale_value()));
  }
  for (auto* o : observers) o->on_step_end(event);
  return event;
}

double TrainingRun::evaluate(int64_t batches) {
  // Validation is not part of the training step the op table describes: keep its ops out.
  at::DisableRecordFunctionGuard no_recording;
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(config_.seed + 0x5DEECE66DULL);
  model_->set_training(false);
  at::Tensor sum;
  try {
    c10::InferenceMode inference;
    std::optional<AutocastGuard> autocast;
    if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
    for (int64_t i = 0; i < batches; ++i) {
      Batch batch = data_->sample_batch(config_.batch_size, generator);
      const at::Tensor output = model_->forward(batch.input.to(device_, /*non_blocking=*/true));
      const at::Tensor loss = compute_loss(output, batch.target.to(device_, /*non_blocking=*/true)).to(at::kFloat);
      sum = sum.defined() ? sum + loss : loss;
    }
  } catch (...) {
    model_->set_training(true);
    throw;
  }
  model_->set_training(true);
  return sum.item<double>() / static_cast<double>(batches);
}

}  // namespace ampscope::engine
