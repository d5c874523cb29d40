#pragma once
// The range statistics' cases the one-read loops are held to, on the CPU
// (test_range_stats_cpu.cpp) and on a GPU (test_range_stats_gpu.cpp): gradients of
// every dtype with zeros, NaN, inf, tiny and huge values, and one spread over several
// of a loop's chunks; and the comparison of two passes' samples.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "profiler/capture/gradient_stats.h"

namespace ampscope::profiler::range_cases {

// Magnitudes log-uniform over 2^-150 .. 2^40, both signs, then zeros, NaN, inf.
inline at::Tensor wide_values(int64_t n, uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor x = at::exp2(at::rand({n}, at::kDouble) * 190 - 150) * at::where(at::rand({n}) < 0.5, -1.0, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  x.slice(0, 0, 5).copy_(at::tensor({0.0, -0.0, std::nan(""), inf, -inf}, at::kDouble));
  return x;
}

inline at::Tensor parameter(const at::Tensor& gradient) {
  at::Tensor p = at::zeros(gradient.sizes(), gradient.options()).set_requires_grad(true);
  p.mutable_grad() = gradient;
  return p;
}

inline std::vector<std::pair<std::string, at::Tensor>> parameters() {
  return {
      {"float", parameter(wide_values(20000, 1).to(at::kFloat))},
      {"bf16", parameter(wide_values(3000, 2).to(at::kBFloat16))},
      {"half", parameter(wide_values(3000, 3).to(at::kHalf))},
      {"double", parameter(wide_values(5000, 4))},
      {"matrix", parameter(at::randn({64, 33}) * 1e-3)},
      {"zeros", parameter(at::zeros({7}))},
      // More than one task of the loop (2^16 elements each).
      {"large", parameter((at::randn({300000}) * 1e-4).to(at::kFloat))},
  };
}

inline void expect_same_samples(const std::vector<GradientSample>& got, const std::vector<GradientSample>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(want[i].parameter);
    EXPECT_EQ(got[i].parameter, want[i].parameter);
    EXPECT_EQ(got[i].numel, want[i].numel);
    EXPECT_EQ(got[i].zero_fraction, want[i].zero_fraction);
    EXPECT_EQ(got[i].nonfinite_fraction, want[i].nonfinite_fraction);
    for (const FloatFormatLimits& f : kFloatFormats) {
      const FormatRangeShares a = range_shares(got[i], f.format), b = range_shares(want[i], f.format);
      EXPECT_EQ(a.underflow, b.underflow) << f.name;
      EXPECT_EQ(a.subnormal, b.subnormal) << f.name;
      EXPECT_EQ(a.overflow, b.overflow) << f.name;
    }
    EXPECT_EQ(got[i].min_abs_nonzero, want[i].min_abs_nonzero);
    EXPECT_EQ(got[i].max_abs, want[i].max_abs);
    EXPECT_NEAR(got[i].norm, want[i].norm, 1e-12 * want[i].norm);
    EXPECT_EQ(got[i].log2_histogram, want[i].log2_histogram);
  }
}

}  // namespace ampscope::profiler::range_cases
