#include "engine/grad_scaler.h"

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <string>
#include <vector>

#include "engine/module_scope.h"

namespace ampscope::engine {
namespace {

// Scopes of the scaler's own ops, and of the optimizer's step it runs (no module).
const std::string& scaler_scope() {
  static const std::string name = std::string(kModuleScopePrefix) + kLossScalerModule;
  return name;
}
const std::string& no_module_scope() {
  static const std::string name = kModuleScopePrefix;
  return name;
}

}  // namespace

GradScaler::GradScaler(const ScalerConfig& config, c10::Device device, bool enabled)
    : config_(config), device_(device), enabled_(enabled) {
  if (!enabled_) return;
  if (!(config.init_scale > 0.0))
    throw ConfigError("the loss scaler's initial scale must be positive");
  if (!(config.growth_factor > 1.0)) throw ConfigError("the loss scaler's growth factor must be > 1");
  if (!(config.backoff_factor > 0.0 && config.backoff_factor < 1.0))
    throw ConfigError("the loss scaler's backoff factor must be in (0, 1)");
  if (config.growth_interval <= 0) throw ConfigError("the loss scaler's growth interval must be > 0");
  const auto on_device = at::TensorOptions().device(device_);
  scale_ = at::full({1}, config.init_scale, on_device.dtype(at::kFloat));
  growth_tracker_ = at::zeros({1}, on_device.dtype(at::kInt));
}

at::Tensor GradScaler::scale(const at::Tensor& loss) {
  if (!enabled_) return loss;
  ModuleScope scope(scaler_scope());
  return loss * scale_.to(loss.device(), /*non_blocking=*/true);
}

void GradScaler::unscale_(torch::optim::Optimizer& optimizer) {
  if (!enabled_) return;
  ModuleScope scope(scaler_scope());
  PerOptimizer& state = per_optimizer_[&optimizer];
  if (state.stage == Stage::kUnscaled)
    throw ScalerStateError("unscale_() has already been called on this optimizer since the last update()");
  if (state.stage == Stage::kStepped) throw ScalerStateError("unscale_() is being called after step()");

  // PyTorch computes the reciprocal in double, then rounds to float32.
  const at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  at::Tensor found_inf = at::zeros({}, scale_.options());
  std::vector<at::Tensor> grads;
  for (auto& group : optimizer.param_groups()) {
    for (auto& param : group.params()) {
      if (!param.grad().defined()) continue;
      if (param.grad().scalar_type() == at::kHalf)
        throw ScalerStateError("attempting to unscale fp16 gradients: keep the parameters in fp32 "
                               "and let autocast lower the compute");
      // A sparse gradient is unscaled through its values, which must be unique (coalesced).
      if (param.grad().is_sparse()) param.mutable_grad() = param.grad().coalesce();
      grads.push_back(param.grad().is_sparse() ? param.grad()._values() : param.grad());
    }
  }
  if (!grads.empty()) at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);
  state.found_inf = found_inf;
  state.stage = Stage::kUnscaled;
}

bool GradScaler::step(torch::optim::Optimizer& optimizer) {
  if (!enabled_) {
    optimizer.step();
    return true;
  }
  ModuleScope scope(scaler_scope());
  PerOptimizer& state = per_optimizer_[&optimizer];
  if (state.stage == Stage::kStepped)
    throw ScalerStateError("step() has already been called since the last update()");
  if (state.stage == Stage::kReady) unscale_(optimizer);
  // The one host sync of a step, as in PyTorch: the decision needs the flag.
  const bool found_inf = state.found_inf.item<float>() != 0.0f;
  state.stage = Stage::kStepped;
  last_found_inf_ = found_inf;
  if (found_inf) return false;
  ModuleScope optimizer_scope(no_module_scope());
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!enabled_) return;
  ModuleScope scope(scaler_scope());
  at::Tensor combined;
  for (auto& [optimizer, state] : per_optimizer_) {
    if (!state.found_inf.defined()) continue;
    combined = combined.defined() ? combined + state.found_inf : state.found_inf.clone();
  }
  if (!combined.defined()) throw ScalerStateError("no inf checks were recorded prior to update()");
  at::_amp_update_scale_(scale_, growth_tracker_, combined, config_.growth_factor,
                         config_.backoff_factor, config_.growth_interval);
  per_optimizer_.clear();
}

double GradScaler::scale_value() const { return enabled_ ? scale_.item<double>() : 1.0; }

int64_t GradScaler::growth_tracker_value() const {
  return enabled_ ? growth_tracker_.item<int64_t>() : 0;
}

}  // namespace ampscope::engine
