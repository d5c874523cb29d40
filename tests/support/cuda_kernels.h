#pragma once
// Whether ampscope's own CUDA kernels (profiler/cuda/) can run in this test process:
// the GPU tests of the range statistics and the readiness sums skip without them.
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <string>

#include "profiler/capture/quantization_block_sums_cuda.h"

namespace ampscope::test {

// Empty when they can; else why not. (The kernels are built together, or not at all.)
inline std::string why_cuda_kernels_cannot_run() {
  if (!at::hasCUDA()) return "LibTorch sees no CUDA device";
  if (!profiler::block_sums_on_cuda(at::zeros({1}, at::kCUDA))) return "built without ampscope's CUDA kernels";
  return {};
}

}  // namespace ampscope::test

#define AMPSCOPE_SKIP_WITHOUT_CUDA_KERNELS()                                                  \
  do {                                                                                        \
    if (const std::string why = ::ampscope::test::why_cuda_kernels_cannot_run(); !why.empty()) \
      GTEST_SKIP() << why;                                                                    \
  } while (0)
