// gradient_range_stats against references computed element by element: the
// format shares against LibTorch's own casts of g * scale, the log2 histogram
// against std::frexp.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "profiler/capture/gradient_stats.h"

namespace ampscope::profiler {
namespace {

at::ScalarType torch_type(FloatFormat f) {
  switch (f) {
    case FloatFormat::fp16: return at::kHalf;
    case FloatFormat::bf16: return at::kBFloat16;
    case FloatFormat::fp8_e4m3fn: return at::kFloat8_e4m3fn;
    case FloatFormat::fp8_e5m2: return at::kFloat8_e5m2;
  }
  return at::kFloat;
}

// A parameter whose float32 gradient spans 2^-150 .. 2^40 log-uniformly, with
// zeros, NaN and inf, and every format's bounds (divided by the scale) in it.
at::Tensor parameter_with_gradient(int64_t n, double loss_scale, uint64_t seed) {
  at::manual_seed(seed);
  at::Tensor exponent = at::rand({n}, at::kDouble) * 190 - 150;
  at::Tensor sign = at::where(at::rand({n}) < 0.5, -1.0, 1.0);
  at::Tensor g = (at::exp2(exponent) * sign).to(at::kFloat);
  std::vector<double> special{0.0, 0.0, std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity()};
  for (const FloatFormatLimits& f : kFloatFormats)
    for (double b : {f.min_subnormal / 2, f.min_subnormal, f.min_normal, f.max, f.overflow_bound})
      special.push_back(b / loss_scale);
  g.slice(0, 0, static_cast<int64_t>(special.size())).copy_(at::tensor(special, at::kDouble));
  at::Tensor p = at::zeros({n}, at::kFloat).set_requires_grad(true);
  p.mutable_grad() = g;
  return p;
}

TEST(GradientStats, FormatSharesEqualWhatLibTorchCastsDo) {
  const double scale = 1024;
  std::vector<std::pair<std::string, at::Tensor>> params{{"a", parameter_with_gradient(20000, scale, 1)},
                                                         {"b", parameter_with_gradient(3000, scale, 2)}};
  const auto samples = gradient_range_stats(7, params, scale);
  ASSERT_EQ(samples.size(), 2u);
  for (size_t i = 0; i < samples.size(); ++i) {
    const at::Tensor g = params[i].second.grad().to(at::kDouble);
    const double n = static_cast<double>(g.numel());
    const at::Tensor finite = at::isfinite(g);
    const at::Tensor scaled = g.abs() * scale;
    for (const FloatFormatLimits& f : kFloatFormats) {
      const at::Tensor cast = at::where(finite, scaled, 0.0).to(torch_type(f.format)).to(at::kDouble);
      const double flushed = ((cast == 0) & (scaled > 0) & finite).sum().item<double>();
      const double subnormal = ((cast > 0) & (cast < f.min_normal) & finite).sum().item<double>();
      const double overflow = ((~at::isfinite(cast)) & finite).sum().item<double>();
      const FormatRangeShares got = range_shares(samples[i], f.format);
      EXPECT_EQ(got.underflow, flushed / n) << f.name << " " << samples[i].parameter;
      EXPECT_EQ(got.subnormal, subnormal / n) << f.name << " " << samples[i].parameter;
      EXPECT_EQ(got.overflow, overflow / n) << f.name << " " << samples[i].parameter;
      EXPECT_GT(flushed + subnormal + overflow, 0) << f.name << ": the test data must reach the bounds";
    }
  }
}

TEST(GradientStats, HistogramCountsEveryNonzeroFiniteMagnitudeByItsExactExponent) {
  std::vector<std::pair<std::string, at::Tensor>> params{{"w", parameter_with_gradient(50000, 1.0, 3)}};
  // Values just below and at powers of two, where a rounded log2 would misplace them.
  at::Tensor edge = at::tensor({std::nextafter(1.0, 0.0), 1.0, std::nextafter(0x1p-20, 0.0), 0x1p-20, 0x1p70,
                                0x1p-90},
                               at::kDouble);
  params.emplace_back("edge", at::zeros({6}).set_requires_grad(true));
  params.back().second.mutable_grad() = edge;  // float64 gradient
  const auto samples = gradient_range_stats(1, params, 1.0);
  ASSERT_EQ(samples.size(), 2u);
  for (size_t i = 0; i < samples.size(); ++i) {
    std::array<int64_t, kGradBins> expected{};
    const at::Tensor g = params[i].second.grad().to(at::kDouble).contiguous();
    const double* v = g.data_ptr<double>();
    for (int64_t k = 0; k < g.numel(); ++k) {
      if (v[k] == 0 || !std::isfinite(v[k])) continue;
      int e = 0;
      std::frexp(v[k], &e);
      const int bin = std::clamp(e - 1, kGradLog2Min, kGradLog2Max - 1) - kGradLog2Min;
      ++expected[static_cast<size_t>(bin)];
    }
    EXPECT_EQ(samples[i].log2_histogram, expected) << samples[i].parameter;
  }
  // 1 - ulp lands in [2^-1, 2^0), 1 in [2^0, 2^1); 2^70 in the last bin, 2^-90 in the first.
  const auto& h = samples[1].log2_histogram;
  EXPECT_EQ(h[static_cast<size_t>(-1 - kGradLog2Min)], 1);
  EXPECT_EQ(h[static_cast<size_t>(0 - kGradLog2Min)], 1);
  EXPECT_EQ(h[static_cast<size_t>(-21 - kGradLog2Min)], 1);
  EXPECT_EQ(h[static_cast<size_t>(-20 - kGradLog2Min)], 1);
  EXPECT_EQ(h[kGradBins - 1], 1);
  EXPECT_EQ(h[0], 1);
}

TEST(GradientStats, ScalarsAndSkippedParameters) {
  at::Tensor p = at::zeros({4}).set_requires_grad(true);
  p.mutable_grad() = at::tensor({0.0f, -3.0f, 4.0f, std::numeric_limits<float>::infinity()});
  at::Tensor no_grad = at::zeros({3}).set_requires_grad(true);
  const auto samples = gradient_range_stats(5, {{"none", no_grad}, {"p", p}}, 2.0);
  ASSERT_EQ(samples.size(), 1u);
  const GradientSample& s = samples[0];
  EXPECT_EQ(s.parameter, "p");
  EXPECT_EQ(s.step, 5);
  EXPECT_EQ(s.numel, 4);
  EXPECT_EQ(s.zero_fraction, 0.25);
  EXPECT_EQ(s.nonfinite_fraction, 0.25);
  EXPECT_EQ(s.min_abs_nonzero, 3.0);
  EXPECT_EQ(s.max_abs, 4.0);
  EXPECT_EQ(s.norm, 5.0);
  EXPECT_EQ(s.fp8_e4m3.overflow, 0.0);
  EXPECT_EQ(s.loss_scale, 2.0);
}

}  // namespace
}  // namespace ampscope::profiler
