#pragma once
// Could this op call have used Tensor Cores, and if it likely did not, why?
// Judged from the op name and its recorded input dtypes/shapes only (no GPU):
// the analysis compares it with what the kernels' names say.
#include <string>
#include <vector>

#include "profiler/records.h"

namespace ampscope::profiler::cupti {

struct TensorCoreEligibility {
  // A GEMM/conv/attention op whose floating inputs are fp16/bf16 (or fp8).
  bool eligible = false;
  // For a GEMM-like op, the likely reason it would not (or did not) run on
  // Tensor Cores: "GEMM dimension K=100 is not a multiple of 8", "fp32 inputs
  // (autocast did not lower this op)", "tiny problem (M*N*K < 2^15)". Empty
  // when nothing stands in the way, or for an op that is not GEMM-like.
  std::string reason;
};

// True for aten::mm, addmm, bmm, baddbmm, matmul, linear, conv*, convolution*,
// scaled-dot-product attention and friends.
bool is_gemm_like(const std::string& op_name);

TensorCoreEligibility assess(const std::string& op_name, const std::vector<DtypeName>& input_dtypes,
                             const std::vector<Shape>& input_shapes);

}  // namespace ampscope::profiler::cupti
