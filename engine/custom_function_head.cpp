#include "engine/custom_function_head.h"

#include <ATen/ATen.h>
#include <ATen/SequenceNumber.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>

#include "engine/autocast_guard.h"
#include "engine/module_scope.h"

namespace ampscope::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// y = x @ w over the last dimension of x, for any leading shape.
at::Tensor matmul_last_dim(const at::Tensor& x, const at::Tensor& w) {
  auto shape = x.sizes().vec();
  shape.back() = w.size(1);
  return at::mm(x.reshape({-1, x.size(-1)}), w).reshape(shape);
}

// The gradients of y = x @ w, computed in whatever autocast state the caller set up.
variable_list matmul_backward(const at::Tensor& grad, const at::Tensor& x, const at::Tensor& w) {
  const at::Tensor g2 = grad.reshape({-1, grad.size(-1)});
  const at::Tensor x2 = x.reshape({-1, x.size(-1)});
  return {at::mm(g2, w.t()).reshape(x.sizes()), at::mm(x2.t(), g2)};
}

// What torch.amp.custom_fwd records on ctx and custom_bwd restores: the autocast state the
// forward ran in, so the backward (on the autograd thread, where autocast is off) runs in it too.
void save_autocast_state(AutogradContext* ctx, c10::DeviceType device, bool enabled) {
  ctx->saved_data["device_type"] = static_cast<int64_t>(device);
  ctx->saved_data["autocast_enabled"] = enabled;
  ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(at::autocast::get_autocast_dtype(device));
}

AutocastGuard restore_autocast_state(AutogradContext* ctx) {
  return AutocastGuard(static_cast<c10::DeviceType>(ctx->saved_data["device_type"].toInt()),
                       static_cast<c10::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()),
                       ctx->saved_data["autocast_enabled"].toBool());
}

// custom_fwd(cast_inputs=torch.float32): inside an autocast region, autocast is switched off
// and the floating-point inputs are cast to fp32; outside one, the inputs pass unchanged.
struct Fp32Matmul : public torch::autograd::Function<Fp32Matmul> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w) {
    const c10::DeviceType device = x.device().type();
    const bool caller_autocast = at::autocast::is_autocast_enabled(device);
    save_autocast_state(ctx, device, /*enabled=*/false);
    std::optional<AutocastGuard> off;
    at::Tensor x_in = x, w_in = w;
    if (caller_autocast) {
      off.emplace(device, at::autocast::get_autocast_dtype(device), /*enabled=*/false);
      x_in = x.to(at::kFloat);
      w_in = w.to(at::kFloat);
    }
    ctx->save_for_backward({x_in, w_in});
    return matmul_last_dim(x_in, w_in);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const AutocastGuard state = restore_autocast_state(ctx);
    const auto saved = ctx->get_saved_variables();
    return matmul_backward(grads[0], saved[0], saved[1]);
  }
};

// custom_fwd() without cast_inputs: the ops inside see the caller's autocast state.
struct AutocastMatmul : public torch::autograd::Function<AutocastMatmul> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w) {
    const c10::DeviceType device = x.device().type();
    save_autocast_state(ctx, device, at::autocast::is_autocast_enabled(device));
    ctx->save_for_backward({x, w});
    return matmul_last_dim(x, w);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const AutocastGuard state = restore_autocast_state(ctx);
    const auto saved = ctx->get_saved_variables();
    return matmul_backward(grads[0], saved[0], saved[1]);
  }
};

}  // namespace

CustomFunctionHead::CustomFunctionHead(int64_t features, c10::Device device)
    : fp32_weight_(at::eye(features, at::TensorOptions().device(device).dtype(at::kFloat)).requires_grad_()),
      autocast_weight_(at::eye(features, at::TensorOptions().device(device).dtype(at::kFloat)).requires_grad_()),
      fp32_scope_(std::string(kModuleScopePrefix) + kFp32Path),
      autocast_scope_(std::string(kModuleScopePrefix) + kAutocastPath) {}

// Python's Function.apply records the call under the class name with the sequence number
// of the node it creates; C++'s apply records nothing. Recording the same way lets op
// observers (ampscope's, torch.profiler) join the function's backward to its module.
#define AMPSCOPE_RECORD_CUSTOM_FUNCTION(name, x, w) \
  RECORD_FUNCTION(name, std::vector<c10::IValue>({x, w}), at::sequence_number::peek())

at::Tensor CustomFunctionHead::forward(const at::Tensor& x) const {
  at::Tensor y;
  {
    ModuleScope scope(fp32_scope_);
    AMPSCOPE_RECORD_CUSTOM_FUNCTION("Fp32Matmul", x, fp32_weight_);
    y = scope.output(Fp32Matmul::apply(scope.input(x), fp32_weight_));
  }
  ModuleScope scope(autocast_scope_);
  AMPSCOPE_RECORD_CUSTOM_FUNCTION("AutocastMatmul", y, autocast_weight_);
  return scope.output(AutocastMatmul::apply(scope.input(y), autocast_weight_));
}

std::vector<std::pair<std::string, at::Tensor>> CustomFunctionHead::named_parameters() const {
  return {{std::string(kFp32Path) + ".weight", fp32_weight_},
          {std::string(kAutocastPath) + ".weight", autocast_weight_}};
}

}  // namespace ampscope::engine
