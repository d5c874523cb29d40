#include "profiler/capture/gradient_stats.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "profiler/capture/format_counts.h"

namespace ampscope::profiler {
namespace {

// Scalars per parameter: counts, then three counts per format (FloatFormat
// order), then min/max/norm, then kGradBins histogram counts.
enum Slot { kNumel, kZeros, kNonfinite, kFormatCounts };
constexpr int kMinNonzero = kFormatCounts + kCountsPerFormat * kFloatFormatCount;
constexpr int kMaxAbs = kMinNonzero + 1, kNorm = kMinNonzero + 2, kScalars = kMinNonzero + 3;

// log2 histogram of the nonzero finite |g| without a host sync: at::bincount
// reads its input's max on the host (a device-to-host copy per call on CUDA);
// index_add_ into a fixed-size zero tensor does not. Counts are float64, exact
// below 2^53.
at::Tensor log2_histogram(const at::Tensor& a, const at::Tensor& nonzero) {
  // frexp: |x| = m * 2^e with m in [0.5, 1), so floor(log2|x|) = e - 1, exactly
  // (log2 can round up just below a power of two).
  const at::Tensor exponents = std::get<1>(at::frexp(at::where(nonzero, a, 1.0))).to(at::kLong) - 1;
  const at::Tensor in_range = exponents.clamp(kGradLog2Min, kGradLog2Max - 1) - kGradLog2Min;
  // Zeros and non-finite values go to an extra last bin, dropped below.
  const at::Tensor bins = at::where(nonzero, in_range, static_cast<int64_t>(kGradBins));
  return at::zeros({kGradBins + 1}, a.options())
      .index_add_(0, bins, at::ones_like(a))
      .slice(0, 0, kGradBins);
}

at::Tensor stats_row(const at::Tensor& grad, double loss_scale) {
  // float64 keeps counts exact and the tiny magnitudes representable.
  const at::Tensor g = grad.detach().reshape({-1}).to(at::kDouble);
  const at::Tensor a = g.abs();
  const at::Tensor finite = at::isfinite(g);
  const at::Tensor nonzero = (a > 0) & finite;
  const at::Tensor scaled = a * loss_scale;
  const auto count = [](const at::Tensor& mask) { return mask.sum().to(at::kDouble).reshape({1}); };
  std::vector<at::Tensor> parts{at::full({1}, static_cast<double>(g.numel()), g.options()),
                                count((a == 0) & finite), count(~finite)};
  for (at::Tensor& c : format_counts(scaled, finite, nonzero)) parts.push_back(std::move(c));
  const double inf = std::numeric_limits<double>::infinity();
  parts.push_back(at::where(nonzero, a, inf).min().reshape({1}));
  parts.push_back(at::where(finite, a, 0.0).max().reshape({1}));
  parts.push_back(at::linalg_vector_norm(at::where(finite, g, 0.0), 2).reshape({1}));
  parts.push_back(log2_histogram(a, nonzero));
  return at::cat(parts);
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
    for (const FloatFormatLimits& f : kFloatFormats) {
      const int base = kFormatCounts + kCountsPerFormat * static_cast<int>(f.format);
      set_range_shares(s, f.format, {acc[i][base] / n, acc[i][base + 1] / n, acc[i][base + 2] / n});
    }
    s.min_abs_nonzero = std::isfinite(acc[i][kMinNonzero]) ? acc[i][kMinNonzero] : 0.0;
    s.max_abs = acc[i][kMaxAbs];
    s.norm = acc[i][kNorm];
    for (int b = 0; b < kGradBins; ++b) s.log2_histogram[b] = static_cast<int64_t>(acc[i][kScalars + b]);
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace ampscope::profiler
