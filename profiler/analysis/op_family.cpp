#include "profiler/analysis/op_family.h"

#include "profiler/analysis/op_classifier.h"

namespace ampscope::profiler {
namespace {

bool is_any_of(std::string_view n, std::initializer_list<std::string_view> names) {
  for (std::string_view candidate : names)
    if (n == candidate) return true;
  return false;
}

}  // namespace

OpFamily op_family(std::string_view op_name) {
  const std::string_view n = op_base_name(op_name);
  if (n == "mm") return OpFamily::kMm;
  if (n == "_scaled_mm") return OpFamily::kScaledMm;
  if (n == "addmm" || n == "_addmm_activation") return OpFamily::kAddmm;
  if (n == "bmm") return OpFamily::kBmm;
  if (n == "baddbmm" || n == "addbmm") return OpFamily::kBaddbmm;
  if (n == "matmul") return OpFamily::kMatmul;
  if (n == "linear") return OpFamily::kLinear;
  // Backward first: "cudnn_convolution_backward_input" starts like a forward convolution.
  if (n == "convolution_backward" || n == "convolution_backward_overrideable" ||
      n.starts_with("cudnn_convolution_backward") || n.starts_with("_convolution_backward") ||
      n.starts_with("mkldnn_convolution_backward") || n.starts_with("miopen_convolution_backward") ||
      n.starts_with("_slow_conv2d_backward") || n.starts_with("slow_conv3d_backward")) {
    return OpFamily::kConvBackward;
  }
  if (n.starts_with("conv_transpose") || n.starts_with("cudnn_convolution_transpose") ||
      n.starts_with("miopen_convolution_transpose") || n.starts_with("slow_conv_transpose") ||
      n == "mkldnn_convolution_transpose") {
    return OpFamily::kConvTranspose;
  }
  if (is_any_of(n, {"convolution", "_convolution", "_convolution_mode", "conv1d", "conv2d", "conv3d", "conv_tbc",
                    "cudnn_convolution", "mkldnn_convolution", "miopen_convolution", "miopen_depthwise_convolution",
                    "_nnpack_spatial_convolution", "_conv_depthwise2d", "conv_depthwise3d", "_slow_conv2d_forward",
                    "slow_conv3d_forward", "slow_conv3d", "thnn_conv2d", "slow_conv_dilated2d",
                    "slow_conv_dilated3d"})) {
    return OpFamily::kConv;
  }
  if (n == "scaled_dot_product_attention" || n.starts_with("_scaled_dot_product_") ||
      n.starts_with("_flash_attention") || n.starts_with("_efficient_attention") ||
      n.starts_with("_cudnn_attention")) {
    return n.ends_with("_backward") ? OpFamily::kAttentionBackward : OpFamily::kAttention;
  }
  return OpFamily::kNone;
}

bool is_gemm_like(const std::string& op_name) { return is_gemm_like(op_family(op_name)); }

std::vector<size_t> operand_indices(OpFamily f, size_t n_inputs) {
  switch (f) {
    case OpFamily::kMm:
    case OpFamily::kScaledMm:
    case OpFamily::kBmm:
    case OpFamily::kMatmul:
    case OpFamily::kLinear:
    case OpFamily::kConv:
    case OpFamily::kConvTranspose:
      return {0, 1};
    case OpFamily::kAddmm:
    case OpFamily::kBaddbmm:
      return {1, 2};
    case OpFamily::kConvBackward:
      return {0, 1, 2};  // grad_out, input, weight
    case OpFamily::kAttention:
      return {0, 1, 2};  // q, k, v
    case OpFamily::kAttentionBackward:
      return {0, 1, 2, 3};  // grad_out, q, k, v
    case OpFamily::kNone:
      break;
  }
  std::vector<size_t> all(n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) all[i] = i;
  return all;
}

bool is_leaf_compute_op(std::string_view op_name) {
  const std::string_view n = op_base_name(op_name);
  if (is_any_of(n, {"mm", "_scaled_mm", "addmm", "_addmm_activation", "bmm", "baddbmm", "addbmm", "convolution",
                    "convolution_backward"})) {
    return true;
  }
  return n.starts_with("_scaled_dot_product_") && n.find("_math") == std::string_view::npos;
}

std::string matched_op_name(const std::string& op_name) {
  return is_attention(op_family(op_name)) ? "aten::scaled_dot_product_attention" : op_name;
}

std::vector<Shape> matched_op_shapes(const std::string& op_name, const std::vector<Shape>& input_shapes) {
  const OpFamily f = op_family(op_name);
  if (!is_attention(f)) return input_shapes;
  const size_t first = f == OpFamily::kAttentionBackward ? 1 : 0;  // after grad_out
  std::vector<Shape> qkv;
  for (size_t i = first; i < first + 3 && i < input_shapes.size(); ++i) qkv.push_back(input_shapes[i]);
  return qkv;
}

}  // namespace ampscope::profiler
