#include "profiler/capture/gradient_stats.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace ampscope::profiler {
namespace {

// fp16 landmarks, in absolute value.
constexpr double kFp16SubnormalFloor = 5.960464477539063e-08;  // 2^-24, smallest positive subnormal
constexpr double kFp16SmallestNormal = 6.103515625e-05;         // 2^-14
constexpr double kFp16Max = 65504.0;

// Scalars per parameter, followed by kGradBins histogram counts.
enum Slot { kNumel, kZeros, kNonfinite, kUnderflow, kSubnormal, kOverflow, kMinNonzero, kMaxAbs, kNorm, kScalars };

at::Tensor stats_row(const at::Tensor& grad, double loss_scale) {
  // float64 keeps counts exact and the tiny magnitudes representable.
  const at::Tensor g = grad.detach().reshape({-1}).to(at::kDouble);
  const at::Tensor a = g.abs();
  const at::Tensor finite = at::isfinite(g);
  const at::Tensor nonzero = (a > 0) & finite;
  const at::Tensor scaled = a * loss_scale;
  const auto count = [](const at::Tensor& mask) { return mask.sum().to(at::kDouble).reshape({1}); };
  const double inf = std::numeric_limits<double>::infinity();
  const at::Tensor min_nonzero = at::where(nonzero, a, inf).min().reshape({1});
  const at::Tensor max_abs = at::where(finite, a, 0.0).max().reshape({1});
  const at::Tensor norm = at::linalg_vector_norm(at::where(finite, g, 0.0), 2).reshape({1});
  // log2 bins of nonzero finite values; out-of-range values land in the end bins.
  const at::Tensor exponents =
      at::floor(at::log2(at::where(nonzero, a, 1.0))).clamp(kGradLog2Min, kGradLog2Max - 1) - kGradLog2Min;
  const at::Tensor bins = at::where(nonzero, exponents, static_cast<double>(kGradBins)).to(at::kLong);
  const at::Tensor histogram = at::bincount(bins, {}, kGradBins + 1).slice(0, 0, kGradBins).to(at::kDouble);
  return at::cat({at::full({1}, static_cast<double>(g.numel()), g.options()), count((a == 0) & finite),
                  count(~finite), count(nonzero & (scaled < kFp16SubnormalFloor)),
                  count(nonzero & (scaled >= kFp16SubnormalFloor) & (scaled < kFp16SmallestNormal)),
                  count(finite & (scaled > kFp16Max)), min_nonzero, max_abs, norm, histogram});
}

}  // namespace

std::vector<GradientSample> gradient_range_stats(
    int64_t step, const std::vector<std::pair<std::string, at::Tensor>>& parameters, double loss_scale) {
  std::vector<const std::string*> names;
  std::vector<at::Tensor> rows;
  for (const auto& [name, param] : parameters) {
    const at::Tensor& grad = param.grad();
    if (!grad.defined() || grad.numel() == 0) continue;
    names.push_back(&name);
    rows.push_back(stats_row(grad, loss_scale));
  }
  std::vector<GradientSample> samples;
  if (rows.empty()) return samples;
  const at::Tensor host = at::stack(rows).cpu();  // the one transfer
  const auto acc = host.accessor<double, 2>();
  for (size_t i = 0; i < names.size(); ++i) {
    GradientSample s;
    s.step = step;
    s.parameter = *names[i];
    s.loss_scale = loss_scale;
    s.numel = static_cast<int64_t>(acc[i][kNumel]);
    const double n = std::max(1.0, acc[i][kNumel]);
    s.zero_fraction = acc[i][kZeros] / n;
    s.nonfinite_fraction = acc[i][kNonfinite] / n;
    s.fp16_underflow_fraction = acc[i][kUnderflow] / n;
    s.fp16_subnormal_fraction = acc[i][kSubnormal] / n;
    s.fp16_overflow_fraction = acc[i][kOverflow] / n;
    s.min_abs_nonzero = std::isfinite(acc[i][kMinNonzero]) ? acc[i][kMinNonzero] : 0.0;
    s.max_abs = acc[i][kMaxAbs];
    s.norm = acc[i][kNorm];
    for (int b = 0; b < kGradBins; ++b) s.log2_histogram[b] = static_cast<int64_t>(acc[i][kScalars + b]);
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace ampscope::profiler
