#pragma once
// SGD (momentum), Adam and AdamW as torch.optim runs them by default on CUDA: multi-tensor
// (foreach=True: a handful of at::_foreach_* ops per step over all parameters) or fused
// (fused=True: at::_fused_sgd_ / _fused_adam_ / _fused_adamw_, one kernel per step; CUDA, and
// the CPU since torch 2.4). LibTorch's own torch::optim classes loop over parameters one by
// one, several ops each, which is what PyTorch's foreach default was made to avoid.
//
// They are torch::optim::Optimizers with the usual option types (SGDOptions, AdamOptions,
// AdamWOptions), so LearningRateSchedule (set_lr) and GradScaler (param_groups, step) use them
// unchanged. A parameter without a gradient is skipped and its step count does not advance,
// as in torch.optim. The state lives in this object, not in Optimizer::state().
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <vector>

#include "engine/config.h"

namespace ampscope::engine {

class MultiTensorOptimizer final : public torch::optim::Optimizer {
 public:
  // Throws ConfigError for impossible hyper-parameters.
  MultiTensorOptimizer(const OptimConfig& config, std::vector<at::Tensor> parameters);

  at::Tensor step(LossClosure closure = nullptr) override;
  // Optimizer::save/load would write Optimizer::state(), which this class does not use.
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

  bool fused() const { return fused_; }

 private:
  // Per parameter, in param_groups order. Undefined until the parameter's first update.
  struct ParamState {
    at::Tensor momentum_buffer;       // SGD with momentum
    at::Tensor exp_avg, exp_avg_sq;   // Adam/AdamW
    at::Tensor step_tensor;           // fused Adam/AdamW: float32 scalar on the parameter's device
    int64_t step = 0;                 // Adam/AdamW updates applied so far
  };
  // Parameters with a gradient, grouped by device and dtype as torch.optim groups them.
  struct Bucket {
    std::vector<at::Tensor> params, grads;
    std::vector<ParamState*> states;
  };

  void step_sgd(Bucket& bucket, double lr) const;
  void step_adam(Bucket& bucket, double lr);

  OptimizerKind kind_;
  bool fused_;
  double momentum_, weight_decay_, beta1_, beta2_, eps_;
  std::vector<ParamState> states_;
};

}  // namespace ampscope::engine
