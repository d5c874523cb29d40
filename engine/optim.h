#pragma once
// Optimizers and learning-rate schedules.
#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "engine/config.h"

namespace torch::optim {
class Optimizer;
}

namespace ampscope::engine {

// torch.optim's multi-tensor (foreach) SGD/Adam/AdamW, or fused with config.fused (see
// multi_tensor_optim.h). Throws ConfigError for impossible hyper-parameters.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimConfig& config,
                                                        std::vector<at::Tensor> parameters);

// lr as a function of the optimizer step (0-based), like torch.optim.lr_scheduler
// composed of LinearLR warm-up and CosineAnnealingLR.
class LearningRateSchedule {
 public:
  LearningRateSchedule(const OptimConfig& config, int64_t total_steps);
  double lr_at(int64_t step) const;
  // Sets every parameter group's lr for this step; returns it.
  double apply(torch::optim::Optimizer& optimizer, int64_t step) const;

 private:
  OptimConfig config_;
  int64_t total_steps_;
};

}  // namespace ampscope::engine
