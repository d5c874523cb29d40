#pragma once
// Could this op call have used Tensor Cores, and if it likely did not, why?
// Judged from the op name and its recorded input dtypes/shapes only (no GPU):
// the analysis compares it with what the kernels' names say.
#include <string>
#include <vector>

#include "profiler/analysis/op_family.h"
#include "profiler/records.h"

namespace ampscope::profiler {

struct TensorCoreEligibility {
  // A GEMM/conv/attention op whose multiplied operands are fp16/bf16/fp8, or fp32
  // where TF32 is allowed for the library that runs it.
  bool eligible = false;
  // Why the op would not run on Tensor Cores: "fp32 inputs (autocast did not lower
  // this op; TF32 is off for matmuls)", "fp64 inputs ...", "tiny problem (M*N*K <
  // 2^15)". Empty when nothing stands in the way, or for an op that is not GEMM-like.
  std::string reason;
  // Not a reason to miss Tensor Cores, only to run slower on them: since cuBLAS 11
  // and cuDNN 8, unaligned K/N/channels still use Tensor Core kernels (with
  // padding or smaller tiles). "GEMM dimension K=100 is not a multiple of 8".
  std::string speed_hint;
};

// Whether fp32 GEMMs/convs may run as TF32 on Tensor Cores. The defaults are
// PyTorch's: torch.backends.cuda.matmul.allow_tf32 = False,
// torch.backends.cudnn.allow_tf32 = True.
struct Tf32Settings {
  bool matmul = false;  // cuBLAS
  bool cudnn = true;    // convolutions
};

TensorCoreEligibility assess(const std::string& op_name, const std::vector<DtypeName>& input_dtypes,
                             const std::vector<Shape>& input_shapes, Tf32Settings tf32 = {});

}  // namespace ampscope::profiler
