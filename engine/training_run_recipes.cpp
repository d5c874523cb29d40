// The forward and backward of one micro-batch in each recipe's pattern (config.h,
// RecipeKind), after the AMP examples of PyTorch's documentation. The optimizer
// phase they all share is TrainingRun::step's.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/autograd.h>

#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "engine/autocast_guard.h"
#include "engine/module_scope.h"
#include "engine/training_run.h"

namespace ampscope::engine {
namespace {

// The penalty's weight in loss + weight * ||grad||. PyTorch's example adds it with weight 1;
// at 1 the penalty outweighs the task on the small built-in models and the loss hardly falls.
constexpr double kGradientPenaltyWeight = 0.1;

at::Tensor per_micro_batch(const at::Tensor& loss, int64_t micro_batches) {
  // Each micro-batch contributes 1/N so the accumulated gradient is the effective batch's mean.
  return micro_batches > 1 ? loss / static_cast<double>(micro_batches) : loss;
}

}  // namespace

// Forward and loss inside the autocast region; every backward stays outside it, as PyTorch
// recommends.
at::Tensor TrainingRun::forward_loss(const Trainee& t, const at::Tensor& input, const at::Tensor& target) const {
  PhaseScope phase(kPhaseForward);
  std::optional<AutocastGuard> autocast;
  if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
  return compute_loss(t.forward(input), target);
}

at::Tensor TrainingRun::forward_backward(const at::Tensor& input, const at::Tensor& target,
                                         int64_t micro_batches) {
  switch (config_.recipe) {
    case RecipeKind::kMultiLoss: return forward_backward_multi_loss(input, target, micro_batches);
    case RecipeKind::kGradientPenalty: return forward_backward_gradient_penalty(input, target, micro_batches);
    case RecipeKind::kStandard:
    case RecipeKind::kCustomFunction: break;  // the custom functions are in the trainee's head
  }
  const at::Tensor loss = forward_loss(trainees_.front(), input, target);
  {
    PhaseScope phase(kPhaseBackward);
    scaler_->scale(per_micro_batch(loss, micro_batches)).backward();
  }
  return loss.detach().to(at::kFloat);
}

std::pair<at::Tensor, at::Tensor> TrainingRun::multi_losses(const at::Tensor& out_a, const at::Tensor& out_b,
                                                            const at::Tensor& target) const {
  // The mix of PyTorch's example: each loss sees both models.
  return {compute_loss(2.0 * out_a + 3.0 * out_b, target), compute_loss(3.0 * out_a - 5.0 * out_b, target)};
}

// Two models, two losses that each mix both outputs, one scaler: each loss is scaled and
// backpropagated (the first keeps the graph for the second); the optimizer phase then
// unscale_s A's optimizer and steps each.
at::Tensor TrainingRun::forward_backward_multi_loss(const at::Tensor& input, const at::Tensor& target,
                                                    int64_t micro_batches) {
  const Trainee& a = trainees_[0];
  const Trainee& b = trainees_[1];
  at::Tensor loss_a, loss_b;
  {
    PhaseScope phase(kPhaseForward);
    std::optional<AutocastGuard> autocast;
    if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
    std::tie(loss_a, loss_b) = multi_losses(a.forward(input), b.forward(input), target);
  }
  {
    PhaseScope phase(kPhaseBackward);
    scaler_->scale(per_micro_batch(loss_a, micro_batches)).backward({}, /*retain_graph=*/true);
    scaler_->scale(per_micro_batch(loss_b, micro_batches)).backward();
  }
  return (loss_a.detach() + loss_b.detach()).to(at::kFloat);
}

// The gradient penalty of PyTorch's AMP examples: the penalty's gradients come from
// autograd::grad on the *scaled* loss (so small gradients do not flush to zero in fp16),
// unscaled by hand before the penalty is formed; the penalty is computed under autocast
// and added to the loss, whose scaled backward then fills .grad as usual.
at::Tensor TrainingRun::forward_backward_gradient_penalty(const at::Tensor& input, const at::Tensor& target,
                                                          int64_t micro_batches) {
  const Trainee& t = trainees_.front();
  const at::Tensor loss = forward_loss(t, input, target);
  std::vector<at::Tensor> scaled_grads;
  {
    PhaseScope phase(kPhaseBackward);
    scaled_grads = torch::autograd::grad({scaler_->scale(loss)}, t.parameters, /*grad_outputs=*/{},
                                         /*retain_graph=*/true, /*create_graph=*/true, /*allow_unused=*/true);
  }
  at::Tensor total;
  {
    PhaseScope phase(kPhaseForward);
    // PyTorch's example reads 1/scale on the host; the device reciprocal is the same number
    // without a sync.
    const at::Tensor inv_scale =
        scaler_->enabled() ? scaler_->scale_tensor().to(at::kDouble).reciprocal().to(at::kFloat) : at::Tensor();
    std::vector<at::Tensor> grads;
    for (const at::Tensor& g : scaled_grads)
      if (g.defined()) grads.push_back(inv_scale.defined() ? g * inv_scale : g);
    std::optional<AutocastGuard> autocast;
    if (autocast_dtype_) autocast.emplace(device_.type(), *autocast_dtype_);
    at::Tensor squares;
    for (const at::Tensor& g : grads) {
      const at::Tensor s = g.pow(2).sum();
      squares = squares.defined() ? squares + s : s;
    }
    const at::Tensor penalty = squares.defined() ? squares.sqrt() : at::zeros_like(loss);
    total = loss + kGradientPenaltyWeight * penalty;
  }
  {
    PhaseScope phase(kPhaseBackward);
    scaler_->scale(per_micro_batch(total, micro_batches)).backward();
  }
  return total.detach().to(at::kFloat);
}

void TrainingRun::inject_inf_gradient(int64_t model) {
  // Fault injection is not the user's training: keep its op out of the op table.
  at::DisableRecordFunctionGuard no_recording;
  const Trainee& t = trainees_.at(static_cast<size_t>(model));
  for (const at::Tensor& p : t.parameters) {
    if (!p.grad().defined() || p.grad().numel() == 0) continue;
    at::Tensor element = p.grad();
    while (element.dim() > 0) element = element.select(0, 0);
    element.fill_(std::numeric_limits<double>::infinity());
    return;
  }
}

}  // namespace ampscope::engine
