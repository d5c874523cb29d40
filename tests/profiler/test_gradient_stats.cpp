// gradient_range_stats against references computed element by element: the
// format shares against LibTorch's own casts of g * scale, the log2 histogram
// against std::frexp.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "profiler/analysis/loss_scale_window.h"
#include "profiler/capture/batched_pass.h"
#include "profiler/capture/gradient_stats.h"
#include "tests/support/dispatched_ops.h"

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

// The fp16 loss-scale window read from the histograms holds for LibTorch's own casts: at its
// low end at most 0.1% of the nonzero elements of g·2^m cast to fp16 are 0, one step lower
// more are; at its high end none is inf, one step higher one is. Gradient-like data: log-
// normal magnitudes, narrow (a window) and wide (none).
TEST(GradientStats, TheLossScaleWindowIsWhereLibTorchsFp16CastsKeepTheGradients) {
  for (const double spread : {3.0, 8.0}) {
    at::manual_seed(static_cast<uint64_t>(spread));
    std::vector<std::pair<std::string, at::Tensor>> params;
    for (const auto& [name, centre, n] : {std::tuple{"w", -20.0, 50000}, std::tuple{"b", -12.0, 300}}) {
      const at::Tensor g = (at::exp2(at::randn({n}, at::kDouble) * spread + centre) *
                            at::where(at::rand({n}) < 0.5, -1.0, 1.0))
                               .to(at::kFloat);
      at::Tensor p = at::zeros({n}, at::kFloat).set_requires_grad(true);
      p.mutable_grad() = g;
      params.emplace_back(name, p);
    }
    const auto window = loss_scale_window(gradient_range_stats(3, params, 1.0));
    ASSERT_TRUE(window);
    EXPECT_EQ(window->fits(), spread == 3.0) << window->lowest_log2 << " .. " << window->highest_log2;
    double nonzero = 0;
    for (const auto& [name, p] : params) nonzero += (p.grad() != 0).sum().item<double>();
    const auto cast_at = [&](int m, bool count_inf) {
      double n = 0;
      for (const auto& [name, p] : params) {
        const at::Tensor scaled = p.grad().to(at::kDouble) * std::ldexp(1.0, m);
        const at::Tensor half = scaled.to(at::kFloat).to(at::kHalf);
        n += count_inf ? at::isinf(half).sum().item<double>() : ((half == 0) & (scaled != 0)).sum().item<double>();
      }
      return n;
    };
    EXPECT_LE(cast_at(window->lowest_log2, false), 0.001 * nonzero);
    EXPECT_GT(cast_at(window->lowest_log2 - 1, false), 0.001 * nonzero);
    EXPECT_EQ(cast_at(window->highest_log2, true), 0);
    EXPECT_GT(cast_at(window->highest_log2 + 1, true), 0);
    if (window->fits()) continue;
    // What the greatest scale loses: the share flushed is LibTorch's; the norm share an upper bound.
    EXPECT_DOUBLE_EQ(window->flushed_at_highest * nonzero, cast_at(window->highest_log2, false));
    double flushed_norm2 = 0, norm2 = 0;
    for (const auto& [name, p] : params) {
      const at::Tensor g = p.grad().to(at::kDouble);
      const at::Tensor half = (g * std::ldexp(1.0, window->highest_log2)).to(at::kFloat).to(at::kHalf);
      flushed_norm2 += at::where((half == 0) & (g != 0), g * g, 0.0).sum().item<double>();
      norm2 += (g * g).sum().item<double>();
    }
    EXPECT_GE(window->flushed_norm_share_at_highest, std::sqrt(flushed_norm2 / norm2));
    EXPECT_LE(window->flushed_norm_share_at_highest, 2 * std::sqrt(flushed_norm2 / norm2));  // within a bin's width
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

using test::DispatchedOps;

// An MLP's parameters (width 32), with gradients as the backward leaves them.
std::vector<std::pair<std::string, at::Tensor>> mlp_parameters(int layers) {
  at::manual_seed(static_cast<uint64_t>(layers));
  std::vector<std::pair<std::string, at::Tensor>> params;
  for (int i = 0; i < layers; ++i) {
    for (const auto& [kind, sizes] : {std::pair<std::string, std::vector<int64_t>>{"weight", {32, 32}},
                                      {"bias", {32}}}) {
      at::Tensor p = at::zeros(sizes).set_requires_grad(true);
      p.mutable_grad() = at::randn(sizes) * 1e-3;
      params.emplace_back("layers." + std::to_string(i) + "." + kind, p);
    }
  }
  return params;
}

TEST(GradientStats, OneSampleDispatchesAsManyOpsForSixtyFourLayersAsForFour) {
  const auto small = mlp_parameters(4);
  const auto large = mlp_parameters(64);
  int64_t small_ops = 0, large_ops = 0;
  {
    DispatchedOps ops;
    ASSERT_EQ(gradient_range_stats(1, small, 1.0).size(), 8u);
    small_ops = ops.count();
  }
  {
    DispatchedOps ops;
    ASSERT_EQ(gradient_range_stats(1, large, 1.0).size(), 128u);
    large_ops = ops.count();
  }
  EXPECT_GT(small_ops, 0) << "the counting callback saw nothing";
  EXPECT_EQ(large_ops, small_ops);
}

// The batched pass reads each gradient's elements as they lie in memory: a
// transposed (dense, not contiguous) or expanded gradient, mixed dtypes and
// parameters of other sizes next to each other must each get their own numbers.
TEST(GradientStats, EachParameterKeepsItsOwnNumbersInABatchedPass) {
  at::manual_seed(5);
  const at::Tensor base = at::randn({48, 16}) * 1e-6;
  const std::vector<at::Tensor> grads{base.t(), at::randn({1, 7}).expand({5, 7}), (at::randn({300}) * 1e3).to(at::kBFloat16),
                                      at::randn({3, 4, 5}, at::kDouble) * 1e-30};
  std::vector<std::pair<std::string, at::Tensor>> together;
  for (size_t i = 0; i < grads.size(); ++i) {
    at::Tensor p = at::zeros(grads[i].sizes(), grads[i].options()).set_requires_grad(true);
    p.mutable_grad() = grads[i];
    together.emplace_back("p" + std::to_string(i), p);
  }
  const auto batched = gradient_range_stats(3, together, 256.0);
  ASSERT_EQ(batched.size(), grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    at::Tensor p = at::zeros(grads[i].sizes()).set_requires_grad(true);
    p.mutable_grad() = grads[i].contiguous().clone();
    const auto single = gradient_range_stats(3, {{"p", p}}, 256.0);
    ASSERT_EQ(single.size(), 1u);
    const GradientSample& a = batched[i];
    const GradientSample& b = single[0];
    EXPECT_EQ(a.parameter, "p" + std::to_string(i));
    EXPECT_EQ(a.numel, grads[i].numel());
    EXPECT_EQ(a.max_abs, b.max_abs) << i;
    EXPECT_EQ(a.min_abs_nonzero, b.min_abs_nonzero) << i;
    EXPECT_DOUBLE_EQ(a.norm, b.norm) << i;
    EXPECT_DOUBLE_EQ(a.norm, grads[i].to(at::kDouble).norm().item<double>()) << i;
    EXPECT_EQ(a.log2_histogram, b.log2_histogram) << i;
    for (const FloatFormatLimits& f : kFloatFormats) {
      EXPECT_EQ(range_shares(a, f.format).underflow, range_shares(b, f.format).underflow) << i;
      EXPECT_EQ(range_shares(a, f.format).overflow, range_shares(b, f.format).overflow) << i;
    }
  }
}

}  // namespace
// The per-member histogram both passes count with: spread over lanes (as on a GPU,
// where one member's adds would queue on one address) it counts exactly as in one
// table, and neither mixes members.
TEST(GradientStats, HistogramSpreadOverLanesCountsAsOneTable) {
  at::manual_seed(7);
  const std::vector<at::Tensor> tensors{at::randn({1000}), at::randn({37, 3}), at::randn({1})};
  std::vector<PassMember> members;
  for (size_t i = 0; i < tensors.size(); ++i) members.push_back({i, flat_elements(tensors[i])});
  const Segments seg(members, at::kDouble);
  const at::Tensor bins = (seg.values().abs() * 3).floor().clamp_max(5).to(at::kLong);
  const at::Tensor one = seg.histogram(bins, 6, 1);
  const at::Tensor spread = seg.histogram(bins, 6, Segments::kHistogramLanes);
  ASSERT_EQ(one.sizes(), (std::vector<int64_t>{3, 6}));
  EXPECT_TRUE(at::equal(one, spread)) << one << spread;
  EXPECT_EQ(one.sum(1)[0].item<double>(), 1000);
  EXPECT_EQ(one.sum(1)[1].item<double>(), 111);
  EXPECT_EQ(one.sum(1)[2].item<double>(), 1);
  // The same counts as a bincount of each member alone.
  int64_t start = 0;
  for (int64_t m = 0; m < 3; ++m) {
    const int64_t n = seg.length(static_cast<size_t>(m));
    EXPECT_TRUE(at::equal(one[m], at::bincount(bins.narrow(0, start, n), {}, 6).to(at::kDouble))) << m;
    start += n;
  }
}

// Segments longer than a piece are reduced in pieces, then per segment (on CUDA one
// thread block reduced each whole segment): the same sums, maxima and minima as each
// segment reduced alone, for segments shorter than a piece, exactly one, one more,
// several, and with the extreme in a segment's last piece.
TEST(SegmentLengths, LongSegmentsReduceInPiecesToTheSameValues) {
  at::manual_seed(11);
  const std::vector<int64_t> lengths{1, kSegmentPiece, kSegmentPiece + 1, 3 * kSegmentPiece + 17, 5};
  int64_t total = 0;
  for (const int64_t n : lengths) total += n;
  // Integers as doubles: sums are exact in any order.
  at::Tensor values = at::randint(-1000, 1000, {total}, at::kDouble);
  const int64_t last_of_fourth = 1 + kSegmentPiece + kSegmentPiece + 1 + 3 * kSegmentPiece + 16;
  values[last_of_fourth] = 1e6;
  values[last_of_fourth - 1] = -1e6;
  const SegmentLengths segments(lengths, values.device());
  const at::Tensor sums = segments.reduce(values, "sum");
  const at::Tensor maxima = segments.reduce(values, "max");
  const at::Tensor minima = segments.reduce(values, "min");
  ASSERT_EQ(sums.numel(), static_cast<int64_t>(lengths.size()));
  int64_t start = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    const at::Tensor alone = values.narrow(0, start, lengths[i]);
    const auto at_i = static_cast<int64_t>(i);
    EXPECT_EQ(sums[at_i].item<double>(), alone.sum().item<double>()) << i;
    EXPECT_EQ(maxima[at_i].item<double>(), alone.max().item<double>()) << i;
    EXPECT_EQ(minima[at_i].item<double>(), alone.min().item<double>()) << i;
    start += lengths[i];
  }
  EXPECT_EQ(maxima[3].item<double>(), 1e6);
  EXPECT_EQ(minima[3].item<double>(), -1e6);
}

// Each element's segment, written piece by piece where a segment is long: the same
// map as each segment's index repeated its length, empty segments skipped, with and
// without a segment longer than a piece.
TEST(SegmentLengths, EachElementKnowsItsSegmentAcrossPiecesAndEmptySegments) {
  for (const std::vector<int64_t>& lengths :
       {std::vector<int64_t>{3, 0, 2, 0}, std::vector<int64_t>{0, 2 * kSegmentPiece + 3, 0, 1, kSegmentPiece, 7}}) {
    std::vector<int64_t> expected;
    for (size_t i = 0; i < lengths.size(); ++i) expected.insert(expected.end(), lengths[i], static_cast<int64_t>(i));
    const SegmentLengths segments(lengths, at::kCPU);
    const at::Tensor got = segments.segment_of_each_element(static_cast<int64_t>(expected.size())).contiguous();
    ASSERT_EQ(got.scalar_type(), at::kLong);
    ASSERT_EQ(got.numel(), static_cast<int64_t>(expected.size()));
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), got.const_data_ptr<int64_t>())) << lengths.size();
  }
}

}  // namespace ampscope::profiler
