#pragma once
// Precision readiness's cases the one-read kernels are held to, on the CPU
// (test_quantization_kernel_cpu.cpp) and on a GPU (test_quantization_kernel_gpu.cpp):
// the tensors a sampled step holds, and the comparison of two passes' sums.
#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "profiler/analysis/quantization_readiness.h"
#include "profiler/capture/quantization_sim.h"

namespace ampscope::profiler::quantization_cases {

// The tensors a sampled step holds, in shapes and dtypes the capture meets: widths
// no multiple of a block, bf16 and half activations, a convolution's input, a
// tensor with inf and NaN, all zeros, a gradient's tiny values, values that
// saturate the fp8 formats, a larger weight spread over several of the kernel's tasks.
inline std::vector<at::Tensor> step_tensors() {
  at::manual_seed(27);
  at::Tensor outliers = at::randn({16, 96});
  outliers.select(1, 5).mul_(1e4);
  at::Tensor non_finite = at::randn({3, 40});
  non_finite[0][1] = INFINITY;
  non_finite[2][7] = NAN;
  return {
      at::randn({5, 40}) * 3.0,
      scaling_matrix(at::randn({2, 3, 7}).to(at::kBFloat16), TensorRole::input_activation),
      scaling_matrix(at::randn({4, 33}).to(at::kHalf), TensorRole::input_activation),
      at::zeros({4, 32}),
      at::randn({64, 100}) * 1e-20,
      scaling_matrix(at::randn({2, 8, 3, 3}), TensorRole::input_activation, /*channels_first=*/true),
      scaling_matrix(at::randn({6, 8, 3, 3}), TensorRole::weight),
      outliers,
      non_finite,
      at::randn({300, 512}).to(at::kDouble) * 0.02,
      at::rand({8, 64}) * 6e4,
  };
}

// scale_log2_tolerance: 0 on one device. Across devices the scales (ATen ops on both)
// need not be bit-equal: on an H200 their log2 differed from the CPU's beyond the 6
// digits gtest prints, for every format, while every count and sum agreed. CUDA's log2
// and exp2 are not correctly rounded as glibc's are, and ATen's CUDA division by a
// scalar multiplies by its reciprocal: a scale an ulp or two off, 1.7e-7 in log2 each.
// 1e-6 allows that and no more (a scale one binade off differs by 1).
inline void expect_equal_sums(const QuantizationSums& fused, const QuantizationSums& aten, size_t count,
                              double scale_log2_tolerance = 0.0) {
  ASSERT_EQ(fused.elements, aten.elements);
  for (size_t i = 0; i < count; ++i) {
    SCOPED_TRACE(i);
    const auto a = read_quantization_sums(fused.sums[static_cast<int64_t>(i)].cpu(), fused.elements[i]);
    const auto b = read_quantization_sums(aten.sums[static_cast<int64_t>(i)].cpu(), aten.elements[i]);
    for (int f = 0; f < kQuantFormatCount; ++f) {
      SCOPED_TRACE(quant_format(static_cast<QuantFormat>(f)).key);
      // The dequantized values are the same floats; only the order of the sums differs.
      EXPECT_EQ(a[f].nonzero, b[f].nonzero);
      EXPECT_EQ(a[f].flushed, b[f].flushed);
      EXPECT_EQ(a[f].saturated, b[f].saturated);
      EXPECT_NEAR(a[f].signal, b[f].signal, 1e-5 * b[f].signal);
      EXPECT_NEAR(a[f].noise, b[f].noise, 1e-5 * b[f].noise);
      // Equal (an all-zero matrix's are ±inf on both) or within the tolerance.
      const auto close = [&](double x, double y) { return x == y || std::abs(x - y) <= scale_log2_tolerance; };
      EXPECT_TRUE(close(a[f].scale_log2_min, b[f].scale_log2_min))
          << fmt::format("{:.17g} vs {:.17g}", a[f].scale_log2_min, b[f].scale_log2_min);
      EXPECT_TRUE(close(a[f].scale_log2_max, b[f].scale_log2_max))
          << fmt::format("{:.17g} vs {:.17g}", a[f].scale_log2_max, b[f].scale_log2_max);
    }
  }
}

}  // namespace ampscope::profiler::quantization_cases
