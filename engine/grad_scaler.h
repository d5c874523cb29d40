#pragma once
// Loss scaling for fp16 training with the defaults and semantics of
// torch.amp.GradScaler (torch/amp/grad_scaler.py, PyTorch 2.x):
//   scale(loss) -> backward -> [unscale_(opt) -> clip] -> step(opt) -> update()
// - unscale_ at most once per optimizer between updates; a second call throws.
// - step skips optimizer.step() when any of that optimizer's gradients is inf/NaN.
// - update backs off or grows the scale with the fused at::_amp_update_scale_,
//   combining the found-inf flags of every optimizer stepped since the last update.
// The scale and growth tracker live on the training device, as in PyTorch, so
// the only host synchronisations are the ones PyTorch also makes (the found-inf
// check in step, and whatever the caller reads back).
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <unordered_map>

#include "engine/config.h"
#include "engine/errors.h"

namespace torch::optim {
class Optimizer;
}

namespace ampscope::engine {

// Misuse of the scaler's protocol (double unscale_, step twice, update with no step).
class ScalerStateError : public EngineError {
 public:
  using EngineError::EngineError;
};

class GradScaler {
 public:
  // enabled == false makes every call a pass-through, as GradScaler(enabled=False).
  GradScaler(const ScalerConfig& config, c10::Device device, bool enabled = true);

  bool enabled() const { return enabled_; }
  at::Tensor scale(const at::Tensor& loss);
  // Divides this optimizer's gradients by the scale in place and records whether any is inf/NaN.
  void unscale_(torch::optim::Optimizer& optimizer);
  // Runs optimizer.step() unless a gradient was inf/NaN; returns whether it ran.
  bool step(torch::optim::Optimizer& optimizer);
  void update();

  // Host copies (each is a device read: call them when a sync is acceptable).
  double scale_value() const;
  int64_t growth_tracker_value() const;
  // Whether the inf/NaN check of the last step() of any optimizer found one.
  bool last_step_found_inf() const { return last_found_inf_; }

  const ScalerConfig& config() const { return config_; }
  // The device tensors themselves (undefined when disabled), for batched reads.
  const at::Tensor& scale_tensor() const { return scale_; }
  const at::Tensor& growth_tracker_tensor() const { return growth_tracker_; }

 private:
  enum class Stage { kReady, kUnscaled, kStepped };
  struct PerOptimizer {
    Stage stage = Stage::kReady;
    at::Tensor found_inf;  // float32 scalar on the scale's device; undefined until unscaled
  };

  ScalerConfig config_;
  c10::Device device_;
  bool enabled_;
  at::Tensor scale_;           // float32 [1]
  at::Tensor growth_tracker_;  // int32 [1]: consecutive steps without inf/NaN
  std::unordered_map<const torch::optim::Optimizer*, PerOptimizer> per_optimizer_;
  bool last_found_inf_ = false;
};

}  // namespace ampscope::engine
