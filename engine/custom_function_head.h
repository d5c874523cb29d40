#pragma once
// The custom-function recipe's head: the model's output goes through two custom
// autograd Functions, as users write them for ops autocast does not know.
// - "fp32_function" needs fp32: autocast is off inside and floating inputs are cast to
//   fp32 first, as torch.amp.custom_fwd(cast_inputs=torch.float32) does; its matmul runs
//   in fp32 even in an fp16/bf16 run.
// - "autocast_function" follows the surrounding autocast state, as torch.amp.custom_fwd()
//   does; its matmul is lowered like any other.
// Both backwards run in their forward's autocast state (torch.amp.custom_bwd). Each weight
// starts as the identity, so the head starts as a pass-through of the model's output.
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <string>
#include <utility>
#include <vector>

namespace ampscope::engine {

class CustomFunctionHead {
 public:
  // Module paths of the two functions in the op table (ModuleScope names).
  static constexpr const char* kFp32Path = "fp32_function";
  static constexpr const char* kAutocastPath = "autocast_function";

  CustomFunctionHead(int64_t features, c10::Device device);
  // x: [..., features]; returns the same shape.
  at::Tensor forward(const at::Tensor& x) const;
  std::vector<std::pair<std::string, at::Tensor>> named_parameters() const;

 private:
  at::Tensor fp32_weight_, autocast_weight_;  // [features, features], fp32 leaves
  std::string fp32_scope_, autocast_scope_;   // ModuleScope names; must outlive the scopes
};

}  // namespace ampscope::engine
