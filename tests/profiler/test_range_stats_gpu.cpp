// The range statistics' CUDA kernel (profiler/cuda/range_stats_kernel.cu, issue 27)
// against the CPU loop it twins and the ATen ops it replaces on a GPU: the same
// gradient samples (every dtype; zeros, NaN, inf, subnormal, tiny and huge values; a
// gradient over several thread blocks), the same activation columns in float32 and
// float64, and the same table for members that are empty or of one element. Skipped
// without a CUDA device, or where the build found no CUDA compiler (the ATen ops then
// do this work on a GPU).
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "profiler/capture/batched_pass.h"
#include "profiler/capture/format_counts.h"
#include "profiler/capture/gradient_stats.h"
#include "profiler/capture/range_stats_cpu.h"
#include "profiler/capture/range_stats_cuda.h"
#include "tests/support/cuda_kernels.h"
#include "tests/support/range_stats_cases.h"

namespace ampscope::profiler {
namespace {

using range_cases::expect_same_samples;
using range_cases::wide_values;

std::vector<std::pair<std::string, at::Tensor>> on_cuda(const std::vector<std::pair<std::string, at::Tensor>>& params) {
  std::vector<std::pair<std::string, at::Tensor>> out;
  for (const auto& [name, p] : params) {
    at::Tensor q = p.detach().to(at::kCUDA).set_requires_grad(true);
    q.mutable_grad() = p.grad().to(at::kCUDA);
    out.emplace_back(name, q);
  }
  return out;
}

TEST(RangeStatsGpu, GradientSamplesEqualTheCpuLoopAndTheAtenOps) {
  AMPSCOPE_SKIP_WITHOUT_CUDA_KERNELS();
  auto params = range_cases::parameters();
  // fp32 subnormals and a gradient over many thread blocks (2^16 elements each).
  params.emplace_back("subnormal", range_cases::parameter(at::tensor({1e-40f, -1e-42f, 1e-38f, 0.0f})));
  params.emplace_back("blocks", range_cases::parameter((at::randn({5 * 65536 + 7}) * 1e-6).to(at::kBFloat16)));
  const auto gpu = on_cuda(params);
  for (const double scale : {1.0, 65536.0}) {
    SCOPED_TRACE(scale);
    const auto cpu = gradient_range_stats(3, params, scale, RangeKernel::best);
    const auto kernel = gradient_range_stats(3, gpu, scale, RangeKernel::best);
    const auto aten = gradient_range_stats(3, gpu, scale, RangeKernel::aten);
    {
      SCOPED_TRACE("kernel against the CPU loop");
      expect_same_samples(kernel, cpu);
    }
    {
      SCOPED_TRACE("kernel against the ATen ops on the GPU");
      expect_same_samples(kernel, aten);
    }
  }
}

TEST(RangeStatsGpu, TablesEqualTheCpuLoopForEveryComputeTypeAndEmptyMembers) {
  AMPSCOPE_SKIP_WITHOUT_CUDA_KERNELS();
  for (const at::ScalarType compute : {at::kFloat, at::kDouble}) {
    SCOPED_TRACE(compute);
    const std::vector<at::Tensor> tensors{wide_values(4000, 5).to(compute),
                                          wide_values(100, 6).to(at::kHalf),
                                          at::empty({0}, compute),
                                          (at::randn({200000}) * 100).to(compute),
                                          at::tensor({-3.0}).to(compute)};
    std::vector<PassMember> cpu, gpu;
    for (size_t i = 0; i < tensors.size(); ++i) {
      cpu.push_back({i, flat_elements(tensors[i])});
      gpu.push_back({i, flat_elements(tensors[i].to(at::kCUDA))});
    }
    const std::vector<double> bounds = format_bounds(compute);
    for (const int log2_bins : {0, 20}) {
      SCOPED_TRACE(log2_bins);
      const at::Tensor want = range_stats_cpu(cpu, compute, 8.0, bounds, -10, log2_bins);
      const at::Tensor got = range_stats_cuda(gpu, compute, 8.0, bounds, -10, log2_bins).cpu();
      ASSERT_EQ(got.sizes(), want.sizes());
      const at::Tensor sums = want.select(1, kRangeSumSquares);
      EXPECT_TRUE(at::allclose(got.select(1, kRangeSumSquares), sums, 1e-12, 0)) << got << want;
      const at::Tensor others = at::ones({want.size(1)}, at::kBool).index_fill_(0, at::tensor({int64_t{kRangeSumSquares}}), false);
      EXPECT_TRUE(at::equal(got.index({at::indexing::Slice(), others}), want.index({at::indexing::Slice(), others})))
          << got << want;
    }
  }
}

}  // namespace
}  // namespace ampscope::profiler
