#include "engine/multi_tensor_optim.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <cmath>
#include <map>
#include <tuple>

#include "engine/errors.h"

namespace ampscope::engine {
namespace {

std::unique_ptr<torch::optim::OptimizerOptions> options_for(const OptimConfig& c) {
  switch (c.kind) {
    case OptimizerKind::kSGD:
      return std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(c.lr).momentum(c.momentum).weight_decay(c.weight_decay));
    case OptimizerKind::kAdam:
      return std::make_unique<torch::optim::AdamOptions>(
          torch::optim::AdamOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(c.weight_decay));
    case OptimizerKind::kAdamW:
      return std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(c.weight_decay));
  }
  throw ConfigError("unknown optimizer");
}

}  // namespace

MultiTensorOptimizer::MultiTensorOptimizer(const OptimConfig& c, std::vector<at::Tensor> parameters)
    : torch::optim::Optimizer({torch::optim::OptimizerParamGroup(std::move(parameters))}, options_for(c)),
      kind_(c.kind),
      fused_(c.fused),
      momentum_(c.momentum),
      weight_decay_(c.weight_decay),
      beta1_(c.beta1),
      beta2_(c.beta2),
      eps_(c.eps) {
  for (const auto& p : param_groups().front().params()) {
    if (!at::isFloatingType(p.scalar_type()))
      throw ConfigError("the optimizers update floating-point parameters only");
  }
  states_.resize(param_groups().front().params().size());
}

at::Tensor MultiTensorOptimizer::step(LossClosure closure) {
  c10::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure) {
    c10::AutoGradMode grad_mode(true);
    loss = closure();
  }
  auto& group = param_groups().front();
  const double lr = group.options().get_lr();
  std::map<std::tuple<int, int, int>, Bucket> buckets;  // (device type, index, dtype)
  auto& params = group.params();
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i];
    if (!p.grad().defined()) continue;
    if (p.grad().is_sparse()) throw TrainingError("the optimizers do not take sparse gradients");
    Bucket& b = buckets[{static_cast<int>(p.device().type()), p.device().index(),
                         static_cast<int>(p.scalar_type())}];
    b.params.push_back(p);
    b.grads.push_back(p.grad());
    b.states.push_back(&states_[i]);
  }
  for (auto& [key, bucket] : buckets) {
    if (kind_ == OptimizerKind::kSGD) {
      step_sgd(bucket, lr);
    } else {
      step_adam(bucket, lr);
    }
  }
  return loss;
}

// torch.optim.SGD(foreach=True or fused=True), dampening 0, no Nesterov.
void MultiTensorOptimizer::step_sgd(Bucket& b, double lr) const {
  if (fused_) {
    std::vector<at::Tensor> buffers;
    bool first = momentum_ != 0.0;
    for (const ParamState* s : b.states) first = first && !s->momentum_buffer.defined();
    if (momentum_ != 0.0) {
      for (size_t i = 0; i < b.states.size(); ++i) {
        ParamState& s = *b.states[i];
        // A parameter that gets its first gradient later starts from zeros, which with no
        // dampening gives the same buffer (= its gradient) as torch's first step.
        if (!s.momentum_buffer.defined())
          s.momentum_buffer = first ? at::empty_like(b.grads[i]) : at::zeros_like(b.grads[i]);
        buffers.push_back(s.momentum_buffer);
      }
    }
    at::_fused_sgd_(b.params, b.grads, buffers, weight_decay_, momentum_, lr, /*dampening=*/0.0,
                    /*nesterov=*/false, /*maximize=*/false, /*is_first_step=*/first);
    return;
  }
  std::vector<at::Tensor> grads = b.grads;
  if (weight_decay_ != 0.0) grads = at::_foreach_add(grads, b.params, weight_decay_);
  if (momentum_ != 0.0) {
    bool all_have_buffers = true;
    for (const ParamState* s : b.states) all_have_buffers = all_have_buffers && s->momentum_buffer.defined();
    std::vector<at::Tensor> buffers;
    if (all_have_buffers) {
      for (const ParamState* s : b.states) buffers.push_back(s->momentum_buffer);
      at::_foreach_mul_(buffers, momentum_);
      at::_foreach_add_(buffers, grads, /*alpha=*/1.0);
    } else {
      for (size_t i = 0; i < b.states.size(); ++i) {
        ParamState& s = *b.states[i];
        if (!s.momentum_buffer.defined()) {
          s.momentum_buffer = grads[i].detach().clone();
        } else {
          s.momentum_buffer.mul_(momentum_).add_(grads[i]);
        }
        buffers.push_back(s.momentum_buffer);
      }
    }
    grads = std::move(buffers);
  }
  at::_foreach_add_(b.params, grads, -lr);
}

// torch.optim.Adam/AdamW(foreach=True or fused=True), no amsgrad, not capturable.
void MultiTensorOptimizer::step_adam(Bucket& b, double lr) {
  const bool decoupled = kind_ == OptimizerKind::kAdamW;
  std::vector<at::Tensor> exp_avgs, exp_avg_sqs;
  for (size_t i = 0; i < b.states.size(); ++i) {
    ParamState& s = *b.states[i];
    if (!s.exp_avg.defined()) {
      s.exp_avg = at::zeros_like(b.params[i], at::MemoryFormat::Preserve);
      s.exp_avg_sq = at::zeros_like(b.params[i], at::MemoryFormat::Preserve);
    }
    exp_avgs.push_back(s.exp_avg);
    exp_avg_sqs.push_back(s.exp_avg_sq);
    ++s.step;
  }
  if (fused_) {
    // The fused kernels read the step from a float32 tensor on the parameter's device.
    std::vector<at::Tensor> steps;
    for (size_t i = 0; i < b.states.size(); ++i) {
      ParamState& s = *b.states[i];
      if (!s.step_tensor.defined())
        s.step_tensor = at::zeros({}, b.params[i].options().dtype(at::kFloat));
      steps.push_back(s.step_tensor);
    }
    at::_foreach_add_(steps, 1.0);
    // Unscaled gradients, and no found_inf: GradScaler has already unscaled them and skips
    // the whole step() on inf/NaN, so the step count never needs taking back.
    if (decoupled) {
      at::_fused_adamw_(b.params, b.grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr,
                        beta1_, beta2_, weight_decay_, eps_, /*amsgrad=*/false, /*maximize=*/false);
    } else {
      at::_fused_adam_(b.params, b.grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr,
                       beta1_, beta2_, weight_decay_, eps_, /*amsgrad=*/false, /*maximize=*/false);
    }
    return;
  }
  std::vector<at::Tensor> grads = b.grads;
  if (weight_decay_ != 0.0) {
    if (decoupled) {
      at::_foreach_mul_(b.params, 1.0 - lr * weight_decay_);
    } else {
      grads = at::_foreach_add(grads, b.params, weight_decay_);
    }
  }
  at::_foreach_lerp_(exp_avgs, grads, 1.0 - beta1_);
  at::_foreach_mul_(exp_avg_sqs, beta2_);
  at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1.0 - beta2_);
  // Bias corrections on the host, in double, per parameter (each has its own step count).
  std::vector<at::Scalar> step_sizes, bias_correction2_sqrt;
  for (const ParamState* s : b.states) {
    const double step = static_cast<double>(s->step);
    const double bias_correction1 = 1.0 - std::pow(beta1_, step);
    step_sizes.emplace_back((lr / bias_correction1) * -1.0);
    bias_correction2_sqrt.emplace_back(std::pow(1.0 - std::pow(beta2_, step), 0.5));
  }
  std::vector<at::Tensor> denominators = at::_foreach_sqrt(exp_avg_sqs);
  at::_foreach_div_(denominators, bias_correction2_sqrt);
  at::_foreach_add_(denominators, eps_);
  at::_foreach_addcdiv_(b.params, exp_avgs, denominators, step_sizes);
}

void MultiTensorOptimizer::save(torch::serialize::OutputArchive& /*archive*/) const {
  throw EngineError("saving the optimizer's state is not supported");
}

void MultiTensorOptimizer::load(torch::serialize::InputArchive& /*archive*/) {
  throw EngineError("loading the optimizer's state is not supported");
}

}  // namespace ampscope::engine
