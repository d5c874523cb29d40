#include "profiler/analysis/tensor_core_eligibility.h"

#include <cstdint>
#include <optional>
#include <string_view>

#include "profiler/analysis/op_family.h"

namespace ampscope::profiler {
namespace {

enum class Float { kNone, kHalf, kBf16, kFp8, kFp32, kFp64 };

// Accepts the profiler's names ("float16") and c10's ("c10::Half", "float").
Float float_kind(std::string_view d) {
  if (d.starts_with("c10::")) d.remove_prefix(5);
  if (d == "float16" || d == "Half" || d == "half") return Float::kHalf;
  if (d == "bfloat16" || d == "BFloat16") return Float::kBf16;
  if (d.starts_with("float8") || d.starts_with("Float8")) return Float::kFp8;
  if (d == "float32" || d == "float" || d == "Float") return Float::kFp32;
  if (d == "float64" || d == "double" || d == "Double") return Float::kFp64;
  return Float::kNone;
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

struct Gemm {
  int64_t m = 0, n = 0, k = 0;
};

// The per-GEMM M, N, K (batch dimensions left out), when the shapes say.
std::optional<Gemm> gemm_dims(OpFamily f, const std::vector<Shape>& shapes) {
  size_t a = 0, b = 1;
  if (f == OpFamily::kAddmm || f == OpFamily::kBaddbmm) a = 1, b = 2;
  const Shape* A = shape_at(shapes, a);
  const Shape* B = shape_at(shapes, b);
  if (A == nullptr || B == nullptr) return std::nullopt;
  switch (f) {
    case OpFamily::kMm:
    case OpFamily::kAddmm:
    case OpFamily::kScaledMm:
      if (A->size() != 2 || B->size() != 2) return std::nullopt;
      return Gemm{(*A)[0], (*B)[1], (*A)[1]};
    case OpFamily::kBmm:
    case OpFamily::kBaddbmm:
      if (A->size() != 3 || B->size() != 3) return std::nullopt;
      return Gemm{(*A)[1], (*B)[2], (*A)[2]};
    case OpFamily::kLinear:  // input [..., K], weight [N, K]
      if (B->size() != 2) return std::nullopt;
      return Gemm{product(*A, 0, A->size() - 1), (*B)[0], A->back()};
    case OpFamily::kMatmul: {
      Gemm g;
      g.k = A->back();
      // A batched A against a 2-D B folds the batch into M, as matmul does.
      g.m = A->size() == 1 ? 1
                           : (B->size() <= 2 ? product(*A, 0, A->size() - 1) : (*A)[A->size() - 2]);
      g.n = B->size() == 1 ? 1 : B->back();
      return g;
    }
    default:
      return std::nullopt;
  }
}

std::string not_multiple(const char* what, int64_t value, int multiple) {
  return std::string(what) + "=" + std::to_string(value) + " is not a multiple of " +
         std::to_string(multiple);
}

}  // namespace

TensorCoreEligibility assess(const std::string& op_name, const std::vector<DtypeName>& input_dtypes,
                             const std::vector<Shape>& input_shapes, Tf32Settings tf32) {
  const OpFamily f = op_family(op_name);
  if (f == OpFamily::kNone) return {};

  bool any_low = false, any_fp8 = false, any_fp32 = false, any_fp64 = false;
  for (size_t i : operand_indices(f, input_dtypes.size())) {
    if (i >= input_dtypes.size()) continue;
    switch (float_kind(input_dtypes[i])) {
      case Float::kHalf:
      case Float::kBf16:
        any_low = true;
        break;
      case Float::kFp8:
        any_fp8 = true;
        break;
      case Float::kFp32:
        any_fp32 = true;
        break;
      case Float::kFp64:
        any_fp64 = true;
        break;
      case Float::kNone:
        break;
    }
  }
  if (any_fp64) return {false, "fp64 inputs (Tensor Core GEMMs need fp16/bf16, or fp32 as TF32)", ""};
  if (any_fp32) {
    // fp32 runs on Tensor Cores as TF32 where the library is allowed to: convolutions
    // by PyTorch's default, matmuls only when asked for; the memory-efficient attention
    // kernels for fp32 are 3xTF32 Tensor Core kernels on sm80+ (H100 counters).
    const bool conv = is_convolution(f);
    const bool tf32_ok = is_attention(f) || (conv ? tf32.cudnn : tf32.matmul);
    if (!tf32_ok) {
      return {false,
              conv ? "fp32 inputs (autocast did not lower this op; cuDNN TF32 is off)"
                   : "fp32 inputs (autocast did not lower this op; TF32 is off for matmuls)",
              ""};
    }
  } else if (!any_low && !any_fp8) {
    return {};  // dtypes not recorded, or not floating
  }

  TensorCoreEligibility result{true, "", ""};
  // Tensor Core tiles are fastest with 16-byte aligned rows: 8 elements of 2 bytes,
  // 16 of fp8, 4 of fp32 (TF32).
  const int align = any_fp8 ? 16 : (any_fp32 && !any_low ? 4 : 8);
  const char* const tiny = "tiny problem (M*N*K < 2^15)";

  if (is_convolution(f)) {
    const size_t in = f == OpFamily::kConvBackward ? 1 : 0;
    const Shape* x = shape_at(input_shapes, in);
    const Shape* w = shape_at(input_shapes, in + 1);
    if (w == nullptr || w->size() < 3) return result;
    // The weight is [C_out, C_in/groups, k...], a transposed convolution's [C_in, C_out/groups, k...].
    const bool transposed = f == OpFamily::kConvTranspose;
    const int64_t c_out = transposed ? (*w)[1] : (*w)[0], c_in = transposed ? (*w)[0] : (*w)[1];
    if (c_in % align != 0) {
      result.speed_hint = "conv input channels " + not_multiple("C_in", c_in, align);
    } else if (c_out % align != 0) {
      result.speed_hint = "conv output channels " + not_multiple("C_out", c_out, align);
    }
    if (x != nullptr && x->size() >= 3) {
      // Implicit GEMM: M ~ batch x spatial (stride ignored), N = C_out, K = C_in x kernel.
      const int64_t m = (*x)[0] * product(*x, 2, x->size());
      const int64_t k = c_in * product(*w, 2, w->size());
      if (m * c_out * k < (int64_t{1} << 15)) result.reason = tiny;
    }
    return result;
  }
  if (is_attention(f)) {
    const size_t first = f == OpFamily::kAttentionBackward ? 1 : 0;  // after grad_out
    const Shape* q = shape_at(input_shapes, first);
    const Shape* v = shape_at(input_shapes, first + 2);
    if (q != nullptr && q->back() % align != 0) {
      result.speed_hint = "attention " + not_multiple("head dim E", q->back(), align);
    } else if (v != nullptr && v->back() % align != 0) {
      result.speed_hint = "attention " + not_multiple("value head dim Ev", v->back(), align);
    }
    return result;
  }
  const std::optional<Gemm> g = gemm_dims(f, input_shapes);
  if (!g) return result;
  // K and N are the leading dimensions of row-major operands and output (M is
  // not: a ragged M costs a partial tile).
  if (g->k % align != 0) {
    result.speed_hint = "GEMM dimension " + not_multiple("K", g->k, align);
  } else if (g->n % align != 0) {
    result.speed_hint = "GEMM dimension " + not_multiple("N", g->n, align);
  }
  if (g->m * g->n * g->k < (int64_t{1} << 15)) result.reason = tiny;
  return result;
}

}  // namespace ampscope::profiler
