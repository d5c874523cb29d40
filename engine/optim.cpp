#include "engine/optim.h"

#include <torch/optim/optimizer.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "engine/errors.h"
#include "engine/multi_tensor_optim.h"

namespace ampscope::engine {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimConfig& c,
                                                        std::vector<at::Tensor> parameters) {
  if (!(c.lr > 0.0) || !std::isfinite(c.lr)) throw ConfigError("the learning rate must be a positive number");
  if (c.weight_decay < 0.0) throw ConfigError("weight decay must be >= 0");
  if (c.kind == OptimizerKind::kSGD && (c.momentum < 0.0 || c.momentum >= 1.0))
    throw ConfigError("SGD momentum must be in [0, 1)");
  if (c.kind != OptimizerKind::kSGD && (c.beta1 < 0.0 || c.beta1 >= 1.0 || c.beta2 < 0.0 || c.beta2 >= 1.0))
    throw ConfigError("Adam betas must be in [0, 1)");
  return std::make_unique<MultiTensorOptimizer>(c, std::move(parameters));
}

LearningRateSchedule::LearningRateSchedule(const OptimConfig& config, int64_t total_steps)
    : config_(config), total_steps_(std::max<int64_t>(total_steps, 1)) {
  if (config.warmup_steps < 0) throw ConfigError("warm-up steps must be >= 0");
  if (config.min_lr_ratio < 0.0 || config.min_lr_ratio > 1.0)
    throw ConfigError("the minimum lr ratio must be in [0, 1]");
}

double LearningRateSchedule::lr_at(int64_t step) const {
  const double lr = config_.lr;
  if (config_.schedule == ScheduleKind::kConstant) return lr;
  const int64_t warmup = config_.warmup_steps;
  // Warm-up reaches the full lr at step warmup-1, so step 0 never runs at lr 0.
  if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const double span = static_cast<double>(std::max<int64_t>(total_steps_ - warmup, 1));
  const double progress = std::clamp(static_cast<double>(step - warmup) / span, 0.0, 1.0);
  const double min_lr = lr * config_.min_lr_ratio;
  return min_lr + (lr - min_lr) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

double LearningRateSchedule::apply(torch::optim::Optimizer& optimizer, int64_t step) const {
  const double lr = lr_at(step);
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
  return lr;
}

}  // namespace ampscope::engine
