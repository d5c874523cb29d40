#pragma once
// The one classification of ATen ops by what they compute, from the op's name:
// FLOP counting (flop_count), Tensor Core eligibility (tensor_core_eligibility),
// the report's verdicts and recommendations, and comparisons across precisions
// (which match each kernel variant of an op to the op the user wrote) all read
// it here. Names with or without namespace and overload ("aten::mm.out"). No LibTorch.
#include <string>
#include <string_view>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler {

enum class OpFamily {
  kNone,
  kMm,                 // (a[M,K], b[K,N])
  kScaledMm,           // _scaled_mm (a[M,K], b[K,N], scales...): fp8 GEMM
  kAddmm,              // (bias, a[M,K], b[K,N])
  kBmm,                // (a[B,M,K], b[B,K,N])
  kBaddbmm,            // (bias, a[B,M,K], b[B,K,N]); addbmm sums over B but does the same work
  kMatmul,             // (a[..., M, K], b[..., K, N]), broadcast batch, 1-D operands allowed
  kLinear,             // (x[..., K], w[N, K], bias)
  kConv,               // (x[N, C, spatial...], w[O, C/groups, k...], ...)
  kConvTranspose,      // (x[N, C, spatial...], w[C, O/groups, k...], ...)
  kConvBackward,       // (grad_out[N, O, out spatial...], x, w, ...)
  kAttention,          // (q[..., Sq, E], k[..., Sk, E], v[..., Sk, Ev], ...): every kernel variant
  kAttentionBackward,  // (grad_out, q, k, v, ...)
};

OpFamily op_family(std::string_view op_name);

// GEMMs, convolutions and attention: the ops Tensor Cores run.
inline bool is_gemm_like(OpFamily f) { return f != OpFamily::kNone; }
bool is_gemm_like(const std::string& op_name);
inline bool is_convolution(OpFamily f) {
  return f == OpFamily::kConv || f == OpFamily::kConvTranspose || f == OpFamily::kConvBackward;
}
inline bool is_attention(OpFamily f) { return f == OpFamily::kAttention || f == OpFamily::kAttentionBackward; }

// Which inputs are the multiplied operands (bias, masks and scales do not decide precision).
std::vector<size_t> operand_indices(OpFamily f, size_t n_inputs);
// The first of them: 1 for addmm and friends (bias first), 0 for the rest of the GEMMs.
inline size_t first_operand_index(OpFamily f) {
  return f == OpFamily::kAddmm || f == OpFamily::kBaddbmm ? 1 : 0;
}

// The ops that do the arithmetic themselves rather than through other recorded ops:
// summing these counts every FLOP once. linear, matmul and conv2d are wrappers, and
// so are the math fallback of attention (bmm underneath) and the attention kernels'
// inner calls (_flash_attention_forward under _scaled_dot_product_flash_attention).
bool is_leaf_compute_op(std::string_view op_name);

// The op a user wrote, for matching one model's ops across precisions: every kernel
// variant of scaled-dot-product attention (flash, memory-efficient, cuDNN, math; CPU
// or CUDA), which each precision picks differently, is "aten::scaled_dot_product_attention";
// other ops keep their name.
std::string matched_op_name(const std::string& op_name);
// The shapes that identify such a call: the attention variants' q, k, v (their other
// arguments differ by kernel); all input shapes for other ops.
std::vector<Shape> matched_op_shapes(const std::string& op_name, const std::vector<Shape>& input_shapes);

// shapes[i] when it is recorded and not empty.
inline const Shape* shape_at(const std::vector<Shape>& shapes, size_t i) {
  return i < shapes.size() && !shapes[i].empty() ? &shapes[i] : nullptr;
}

}  // namespace ampscope::profiler
