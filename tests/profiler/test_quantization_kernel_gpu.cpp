// Precision readiness's CUDA kernel (profiler/cuda/block_sums_kernel.cu, issue 27)
// against the CPU kernel it twins and the ATen ops it replaces on a GPU: the sums of
// every format for the tensors a sampled step holds (every dtype; zeros, NaN, inf,
// tiny values, outliers, a matrix over several thread blocks), and the same sums on
// every run. Skipped without a CUDA device, or where the build found no CUDA compiler
// (the ATen ops then do this work on a GPU).
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "profiler/capture/quantization_block_sums_cuda.h"
#include "profiler/capture/quantization_sim.h"
#include "tests/support/cuda_kernels.h"
#include "tests/support/quantization_cases.h"

namespace ampscope::profiler {
namespace {

using quantization_cases::expect_equal_sums;
using quantization_cases::step_tensors;

std::vector<at::Tensor> on_cuda(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : tensors) out.push_back(t.to(at::kCUDA));
  return out;
}

// A weight over several of the kernel's thread blocks (2,048 32-blocks each).
std::vector<at::Tensor> with_a_large_weight(std::vector<at::Tensor> tensors) {
  tensors.push_back((at::randn({768, 3 * 768 + 5}) * 0.02).to(at::kBFloat16));
  return tensors;
}

TEST(QuantizationKernelGpu, SumsEqualTheCpuKernelAndTheAtenOpsOnEveryTensorOfAStep) {
  AMPSCOPE_SKIP_WITHOUT_CUDA_KERNELS();
  const std::vector<at::Tensor> cpu = with_a_large_weight(step_tensors());
  const std::vector<at::Tensor> gpu = on_cuda(cpu);
  const QuantizationSums kernel = quantization_sums(gpu, QuantizationKernel::best);
  EXPECT_TRUE(kernel.sums.is_cuda());
  {
    SCOPED_TRACE("GPU kernel against the ATen ops on the GPU");
    expect_equal_sums(kernel, quantization_sums(gpu, QuantizationKernel::aten), gpu.size());
  }
  {
    SCOPED_TRACE("GPU kernel against the CPU kernel");
    expect_equal_sums(kernel, quantization_sums(cpu, QuantizationKernel::best), cpu.size(),
                      /*scale_log2_tolerance=*/1e-6);
  }
}

TEST(QuantizationKernelGpu, SumsAreTheSameOnEveryRun) {
  AMPSCOPE_SKIP_WITHOUT_CUDA_KERNELS();
  const std::vector<at::Tensor> gpu = on_cuda(with_a_large_weight(step_tensors()));
  const at::Tensor first = quantization_sums(gpu).sums.cpu();
  for (int run = 0; run < 3; ++run) EXPECT_TRUE(at::equal(quantization_sums(gpu).sums.cpu(), first)) << run;
}

}  // namespace
}  // namespace ampscope::profiler
