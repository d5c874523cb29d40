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

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "engine/autocast_guard.h"
#include "engine/bytes_text.h"
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
  at::Tensor coefficient = at::clamp_max(max_norm / (total_norm + 1e-6), 1.0);
  at::_foreach_mul_(grads, coefficient);
  return coefficient;
}

// The bytes of the data files at `path` (a file, or a directory's files); 0 if none.
double data_file_bytes(const std::string& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0) return 0;
  if (S_ISREG(info.st_mode)) return static_cast<double>(info.st_size);
  if (!S_ISDIR(info.st_mode)) return 0;
  // opendir, not std::filesystem: see engine/models/torchscript_model.cpp (pytorch/pytorch#133437).
  double total = 0;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return 0;
  while (const dirent* entry = ::readdir(dir)) {
    struct stat file {};
    if (::stat((path + "/" + entry->d_name).c_str(), &file) == 0 && S_ISREG(file.st_mode))
      total += static_cast<double>(file.st_size);
  }
  ::closedir(dir);
  return total;
}

// What runs out of memory while the data loads is the data, not the model: the message
// names the data's settings (a data file read whole, or the synthetic set's size).
std::string data_memory_advice(const DataConfig& d, ModelKind model) {
  if (d.kind != DataKind::kSynthetic) return fmt::format("give --data-path a smaller data set than '{}'", d.path);
  // The GPT's synthetic token windows grow with the context length too.
  if (model == ModelKind::kGPT) return "lower --synthetic-samples, --seq-len or --vocab-size";
  return "lower --synthetic-samples or --vocab-size";
}

std::unique_ptr<DataSource> load_data(const TrainConfig& c) {
  const int64_t available = available_host_memory_bytes();
  if (const double bytes = data_file_bytes(c.data.path); available >= 0 && bytes > static_cast<double>(available))
    throw DataError(fmt::format("out of memory: the data at '{}' is {}, more than the {} of memory that is free "
                                "(it is read whole); use a smaller data set",
                                c.data.path, bytes_text(bytes), bytes_text(static_cast<double>(available))));
  if (const double bytes = synthetic_data_bytes(c.data, c.model);
      available >= 0 && bytes > static_cast<double>(available))
    throw DataError(fmt::format("out of memory loading the data: the synthetic data set needs {} but only {} of "
                                "memory is free; {}",
                                bytes_text(bytes), bytes_text(static_cast<double>(available)),
                                data_memory_advice(c.data, c.model.kind)));
  try {
    return make_data_source(c.data, c.model, c.seed);
  } catch (const std::bad_alloc&) {
    throw DataError("out of memory loading the data; " + data_memory_advice(c.data, c.model.kind));
  } catch (const c10::Error& e) {
    const std::string what = first_line(e.what_without_backtrace());
    if (!is_allocation_failure(what)) throw;
    throw DataError(fmt::format("out of memory loading the data{}; {}", requested_size(what), data_memory_advice(c.data, c.model.kind)));
  }
}

// Refuses what would not fit in the host memory left now, naming the settings to lower.
void require_memory(double bytes, const std::string& what, ModelKind model) {
  const int64_t available = available_host_memory_bytes();
  if (available < 0 || bytes <= static_cast<double>(available)) return;
  throw TrainingError(fmt::format("out of memory: {} need {} but only {} of memory is free; {}", what,
                                  bytes_text(bytes), bytes_text(static_cast<double>(available)),
                                  model_size_advice(model)));
}

// The least one batch holds on the host: its drawn indices, its inputs and its targets
// (tokens are int64, other inputs float32); the gathers' copies come on top. Checked
// before the first step for the reason synthetic_data_bytes is (data_source.h).
double batch_bytes_at_least(const SampleSpec& spec, int64_t batch_size) {
  double input = 1;
  for (const int64_t d : spec.input_shape) input *= static_cast<double>(d);
  const bool tokens = spec.task == TaskKind::kLanguageModel;
  const double regression_target = static_cast<double>(std::max<int64_t>(1, spec.target_dim)) * 4.0;
  const double target = tokens ? input * 8.0 : spec.task == TaskKind::kRegression ? regression_target : 8.0;
  return static_cast<double>(batch_size) * (8.0 + input * (tokens ? 8.0 : 4.0) + target);
}

}  // namespace

Trainee::Trainee() = default;
Trainee::~Trainee() = default;
Trainee::Trainee(Trainee&&) noexcept = default;
Trainee& Trainee::operator=(Trainee&&) noexcept = default;

at::Tensor Trainee::forward(const at::Tensor& input) const {
  const at::Tensor output = model->forward(input);
  return head ? head->forward(output) : output;
}

NamedTensors Trainee::named_parameters() const {
  NamedTensors named = model->named_parameters();
  if (head)
    for (auto& p : head->named_parameters()) named.push_back(std::move(p));
  if (!module_prefix.empty())
    for (auto& [name, tensor] : named) name.insert(0, module_prefix);
  return named;
}

NamedTensors TrainingRun::named_parameters() const {
  NamedTensors named;
  for (const Trainee& t : trainees_)
    for (auto& p : t.named_parameters()) named.push_back(std::move(p));
  return named;
}

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
  data_ = load_data(config_);
  const bool two_models = config_.recipe == RecipeKind::kMultiLoss;
  const double models = two_models ? 2.0 : 1.0;
  require_memory(models * estimated_weight_bytes(config_.model, data_->spec()),
                 two_models ? "the two models' weights" : "the model's weights", config_.model.kind);
  if (const int64_t available = available_host_memory_bytes(); available >= 0) {
    const double bytes = batch_bytes_at_least(data_->spec(), config_.batch_size);
    if (bytes > static_cast<double>(available))
      throw TrainingError(fmt::format("out of memory: a batch of {} samples needs at least {} but only {} of memory "
                                      "is free; lower --batch-size",
                                      config_.batch_size, bytes_text(bytes),
                                      bytes_text(static_cast<double>(available))));
  }
  int64_t parameter_count = 0;
  for (const char* name : two_models ? std::vector<const char*>{"A", "B"} : std::vector<const char*>{"A"}) {
    Trainee t;
    t.name = name;
    t.module_prefix = two_models ? fmt::format("model_{}.", name[0] == 'A' ? 'a' : 'b') : std::string();
    // Model B draws its initial weights after A's from the same seeded generator: the two differ.
    t.model = make_model(config_.model, data_->spec(), t.module_prefix);
    t.model->to(device_);
    t.model->set_training(true);
    t.parameters = t.model->parameters();
    if (t.parameters.empty()) throw ModelError("the model has no trainable parameters");
    if (config_.recipe == RecipeKind::kCustomFunction) {
      const SampleSpec& spec = data_->spec();
      const int64_t features = spec.task == TaskKind::kRegression ? spec.target_dim : spec.num_classes;
      t.head = std::make_unique<CustomFunctionHead>(features, device_);
      for (const auto& [n, p] : t.head->named_parameters()) t.parameters.push_back(p);
    }
    for (const auto& p : t.parameters) parameter_count += p.numel();
    t.optimizer = make_optimizer(config_.optim, t.parameters);
    t.schedule = std::make_unique<LearningRateSchedule>(config_.optim, config_.steps);
    trainees_.push_back(std::move(t));
  }
  if (device_.is_cpu()) {
    // Gradients and the optimizer's state (momentum; Adam's two moments) come at the first
    // step, one fp32 copy of the weights each: refused now rather than OOM-killed then.
    const int64_t states = config_.optim.kind == OptimizerKind::kSGD ? (config_.optim.momentum != 0 ? 1 : 0) : 2;
    require_memory(4.0 * static_cast<double>(parameter_count) * static_cast<double>(1 + states),
                   fmt::format("its gradients and {} state", to_string(config_.optim.kind)), config_.model.kind);
  }
  scaler_ = std::make_unique<GradScaler>(config_.scaler, device_, config_.scaler_enabled());
  reset_peak_memory(device_);
}

TrainingRun::~TrainingRun() = default;

RunStartedEvent TrainingRun::started_event() const {
  RunStartedEvent e;
  e.config = config_;
  e.device = device_name(device_);
  const std::string description = trainees_.front().model->description();
  e.model = trainees_.size() > 1 ? fmt::format("{}, twice (models A and B)", description) : description;
  e.data = data_->description();
  for (const Trainee& t : trainees_)
    for (const auto& p : t.parameters) e.parameter_count += p.numel();
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

  StepEvent event;
  event.step = step;
  for (Trainee& t : trainees_) {
    const double lr = t.schedule->apply(*t.optimizer, step - 1);
    if (&t == &trainees_.front()) event.lr = lr;
    t.optimizer->zero_grad(/*set_to_none=*/true);
  }
  const int64_t micro_batches = config_.accumulation_steps;
  std::vector<at::Tensor> losses;  // per micro-batch, averaged in the step's unrecorded report
  losses.reserve(static_cast<size_t>(micro_batches));
  for (int64_t micro = 0; micro < micro_batches; ++micro) {
    check_stop();
    Batch batch = data_->sample_batch(config_.batch_size, data_generator_);
    const at::Tensor input = batch.input.to(device_, /*non_blocking=*/true);
    const at::Tensor target = batch.target.to(device_, /*non_blocking=*/true);
    const at::Tensor loss = forward_backward(input, target, micro_batches);
    losses.push_back(loss);
  }
  for (const InfInjection& inject : config_.inject_inf)
    if (inject.step == step) inject_inf_gradient(inject.model);

  Trainee& first = trainees_.front();
  std::vector<at::Tensor> grads;
  at::Tensor clip_coefficient;
  {
    PhaseScope phase(kPhaseOptimizer);
    // Unscale the first optimizer explicitly, at effective-batch granularity, so the norm,
    // clipping and observers see true gradients. A second optimizer (multi-loss) is
    // unscaled inside its step(), as in the recipe PyTorch documents.
    scaler_->unscale_(*first.optimizer);
    grads = defined_grads(first.parameters);
    const at::Tensor norm = total_grad_norm(grads, device_);
    // The optimizer sees the gradients after clipping; observers see them before.
    if (config_.clip_grad_norm > 0.0) clip_coefficient = clip_grads_(grads, norm, config_.clip_grad_norm);
    // One device-to-host transfer for everything the event reports, read back before step()
    // (its found-inf check then finds the device idle) and so before update() changes the
    // scale. These reads are the trainer's report, not its training (a Python loop's .item()
    // of its loss, which the capture reads unrecorded): recorded, their cast to fp64 was an
    // "explicit cast" of the built-in run's optimizer, in a model that casts nothing.
    at::Tensor host;
    {
      at::DisableRecordFunctionGuard report_not_recorded;
      const at::Tensor loss = losses.size() == 1 ? losses.front() : at::stack(losses).mean();
      std::vector<at::Tensor> readings = {loss.reshape({1}), norm.to(loss.device()).to(at::kFloat).reshape({1})};
      if (scaler_->enabled()) {
        readings.push_back(scaler_->scale_tensor().to(at::kFloat).reshape({1}));
        readings.push_back(scaler_->growth_tracker_tensor().to(at::kFloat).reshape({1}));
      }
      host = at::cat(readings).to(at::kDouble).cpu();
    }
    const double* values = host.const_data_ptr<double>();
    event.loss = values[0];
    event.grad_norm = values[1];
    event.loss_scale = scaler_->enabled() ? values[2] : 1.0;
    event.growth_tracker = scaler_->enabled() ? static_cast<int64_t>(values[3]) : 0;
    for (Trainee& t : trainees_) {
      OptimizerOutcome outcome;
      outcome.name = trainees_.size() > 1 ? fmt::format("{} (model {})", to_string(config_.optim.kind), t.name)
                                          : std::string(to_string(config_.optim.kind));
      outcome.lr = event.lr;
      outcome.unscale_calls = scaler_->enabled() && &t == &first ? 1 : 0;
      outcome.skipped = !scaler_->step(*t.optimizer);
      outcome.found_inf = scaler_->enabled() && scaler_->last_step_found_inf();
      event.found_inf = event.found_inf || outcome.found_inf;
      event.skipped = event.skipped || outcome.skipped;
      event.optimizers.push_back(std::move(outcome));
    }
    scaler_->update();
  }
  // The other models' gradients were unscaled inside step(); the reported norm covers them all.
  for (size_t i = 1; i < trainees_.size(); ++i) {
    const double other = total_grad_norm(defined_grads(trainees_[i].parameters), device_).item<double>();
    event.grad_norm = std::hypot(event.grad_norm, other);
  }
  // The step's time includes its device work.
  if (device_.is_cuda()) at::accelerator::synchronizeDevice(device_.index());
  // Per-optimizer records carry the scale update() left (the device is idle: a cheap read).
  if (trainees_.size() > 1) event.loss_scale_after = scaler_->scale_value();
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
  event.observers_from_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
  bool wants = false;
  for (auto* o : observers) wants = o->wants_gradients(step) || wants;
  if (wants) {
    if (clip_coefficient.defined()) at::_foreach_div_(grads, clip_coefficient);
    const NamedTensors named = named_parameters();
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
  nonfinite_loss_since_ = std::isfinite(event.loss) ? 0 : nonfinite_loss_since_ > 0 ? nonfinite_loss_since_ : step;
  if (consecutive_skips_ >= config_.max_consecutive_skips) {
    // A non-finite loss comes from the forward pass, which the loss scale does not touch:
    // halving it further cannot help, and "inf/NaN gradients" alone hides where to look.
    const std::string loss =
        nonfinite_loss_since_ > 0
            ? fmt::format(" and the loss has been {} since step {}: the forward pass itself overflows, which no "
                          "loss scale fixes",
                          std::isnan(event.loss) ? "NaN" : "infinite", nonfinite_loss_since_)
            : "";
    throw TrainingError(fmt::format(
        "{} consecutive steps had inf/NaN gradients (loss scale now {:g}){}: the run diverged "
        "(lower --lr, or check the model for overflow in fp32 too)",
        consecutive_skips_, scaler_->scale_value(), loss));
  }
  for (auto* o : observers) o->on_step_end(event);
  return event;
}

void TrainingRun::check_stop() const {
  if (stop_flag_ != nullptr && stop_flag_->load(std::memory_order_relaxed)) throw StopRequested{};
}

double TrainingRun::evaluate(int64_t batches) {
  // Validation is not part of the training step the op table describes: keep its ops out.
  at::DisableRecordFunctionGuard no_recording;
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(config_.seed + 0x5DEECE66DULL);
  // Validation computes the loss the recipe trains on (multi-loss: both models, both losses),
  // without the gradient penalty, which needs gradients that inference mode does not keep.
  for (Trainee& t : trainees_) t.model->set_training(false);
  const auto back_to_training = [&] {
    for (Trainee& t : trainees_) t.model->set_training(true);
  };
  at::Tensor sum;
  try {
    c10::InferenceMode inference;
    std::optional<AutocastGuard> autocast;
    if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
    for (int64_t i = 0; i < batches; ++i) {
      check_stop();
      Batch batch = data_->sample_batch(config_.batch_size, generator);
      const at::Tensor input = batch.input.to(device_, /*non_blocking=*/true);
      const at::Tensor target = batch.target.to(device_, /*non_blocking=*/true);
      at::Tensor loss;
      if (trainees_.size() > 1) {
        const auto [loss_a, loss_b] = multi_losses(trainees_[0].forward(input), trainees_[1].forward(input), target);
        loss = (loss_a + loss_b).to(at::kFloat);
      } else {
        loss = compute_loss(trainees_.front().forward(input), target).to(at::kFloat);
      }
      sum = sum.defined() ? sum + loss : loss;
    }
  } catch (...) {
    back_to_training();
    throw;
  }
  back_to_training();
  return sum.item<double>() / static_cast<double>(batches);
}

}  // namespace ampscope::engine
