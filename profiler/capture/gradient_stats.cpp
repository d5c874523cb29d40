#include "profiler/capture/gradient_stats.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "profiler/capture/batched_pass.h"
#include "profiler/capture/format_counts.h"
#include "profiler/capture/range_stats_cpu.h"
#include "profiler/capture/range_stats_cuda.h"

namespace ampscope::profiler {
namespace {

// Columns of a pass's table, one row per parameter: counts, then three counts
// per format (FloatFormat order), then min/max/norm, then kGradBins histogram
// counts. float64 keeps counts exact (below 2^53) and tiny magnitudes representable.
enum Slot { kZeros, kNonfinite, kFormatCounts };
constexpr int kMinNonzero = kFormatCounts + kCountsPerFormat * kFloatFormatCount;
constexpr int kMaxAbs = kMinNonzero + 1, kNorm = kMinNonzero + 2, kScalars = kMinNonzero + 3;

// log2 histogram per parameter of the nonzero finite |g| without a host sync
// (at::bincount reads its input's max on the host): Segments::histogram, one row of
// kGradBins + 1 per parameter.
at::Tensor log2_histograms(const at::Tensor& a, const at::Tensor& nonzero, const Segments& seg) {
  // frexp: |x| = m * 2^e with m in [0.5, 1), so floor(log2|x|) = e - 1, exactly
  // (log2 can round up just below a power of two).
  const at::Tensor exponents = std::get<1>(at::frexp(at::where(nonzero, a, 1.0))).to(at::kLong) - 1;
  const at::Tensor in_range = exponents.clamp(kGradLog2Min, kGradLog2Max - 1) - kGradLog2Min;
  // Zeros and non-finite values go to an extra last bin, dropped below.
  const at::Tensor bins = at::where(nonzero, in_range, static_cast<int64_t>(kGradBins));
  return seg.histogram(bins, kGradBins + 1).slice(1, 0, kGradBins);
}

// The same table from one read of each element (range_stats_one_read); undefined where
// no loop reads every member.
at::Tensor pass_table_one_read(const std::vector<PassMember>& members, double loss_scale) {
  const std::vector<double> bounds = format_bounds(at::kDouble);
  const auto places = static_cast<int64_t>(bounds.size()) + 1;
  const at::Tensor t = range_stats_one_read(members, at::kDouble, loss_scale, bounds, kGradLog2Min, kGradBins);
  if (!t.defined()) return t;
  std::vector<at::Tensor> columns{t.select(1, kRangeZeros), t.select(1, kRangeNonfinite)};
  for (const at::Tensor& c : format_counts_from_places(t.narrow(1, kRangePlaces, places), at::kDouble).unbind(1))
    columns.push_back(c);
  columns.push_back(t.select(1, kRangeMinNonzero));
  columns.push_back(t.select(1, kRangeMaxAbs));
  columns.push_back(t.select(1, kRangeSumSquares).sqrt());
  return at::cat({at::stack(columns, 1), t.narrow(1, kRangePlaces + places, kGradBins)}, 1);
}

// How each column merges over the pieces of a gradient the ATen ops measure in pieces
// (table_in_pieces): counts add, extremes take theirs, norms add in squares.
std::vector<PieceMerge> piece_merges() {
  std::vector<PieceMerge> merge(kScalars + kGradBins, PieceMerge::kSum);
  merge[kMinNonzero] = PieceMerge::kMin;
  merge[kMaxAbs] = PieceMerge::kMax;
  merge[kNorm] = PieceMerge::kRootSumSquares;
  return merge;
}

// The table through ATen ops, members at most kPassElements (table_in_pieces).
at::Tensor aten_table(const std::vector<PassMember>& members, double loss_scale) {
  const Segments seg(members, at::kDouble);
  const at::Tensor& g = seg.values();
  const auto count = [&](const at::Tensor& mask) { return seg.count_true(mask); };

  const at::Tensor a = g.abs();
  const at::Tensor finite = at::isfinite(g);
  const at::Tensor nonzero = (a > 0) & finite;
  std::vector<at::Tensor> columns{count((a == 0) & finite), count(~finite)};
  for (const at::Tensor& c : format_counts(a * loss_scale, nonzero, seg).unbind(1)) columns.push_back(c);
  const double inf = std::numeric_limits<double>::infinity();
  columns.push_back(seg.reduce(at::where(nonzero, a, inf), "min"));
  columns.push_back(seg.reduce(at::where(finite, a, 0.0), "max"));
  columns.push_back(seg.reduce(at::where(finite, g, 0.0).square(), "sum").sqrt());
  return at::cat({at::stack(columns, 1), log2_histograms(a, nonzero, seg)}, 1);
}

// One pass: every column for every parameter in it, [parameters, kScalars + kGradBins],
// with a fixed number of ops whatever the number of parameters.
at::Tensor pass_table(const std::vector<PassMember>& members, double loss_scale, RangeKernel kernel) {
  if (kernel == RangeKernel::best)
    if (at::Tensor table = pass_table_one_read(members, loss_scale); table.defined()) return table;
  static const std::vector<PieceMerge> merge = piece_merges();
  return table_in_pieces(members, merge, [&](const std::vector<PassMember>& m) { return aten_table(m, loss_scale); });
}

}  // namespace

std::vector<GradientSample> gradient_range_stats(
    int64_t step, const std::vector<std::pair<std::string, at::Tensor>>& parameters, double loss_scale,
    RangeKernel kernel) {
  // Passes in parameter order (PassPlanner: a pass ends where the device changes or it is full).
  std::vector<const std::pair<std::string, at::Tensor>*> sampled;
  PassPlanner planner;
  for (const auto& entry : parameters) {
    const at::Tensor& grad = entry.second.grad();
    if (!grad.defined() || grad.numel() == 0 || !holds_data(grad)) continue;
    planner.add(sampled.size(), flat_elements(grad));
    sampled.push_back(&entry);
  }
  std::vector<GradientSample> samples(sampled.size());
  for (const std::vector<PassMember>& pass : planner.take()) {
    const at::Tensor host = pass_table(pass, loss_scale, kernel).cpu();  // one transfer per pass
    const auto acc = host.accessor<double, 2>();
    for (size_t i = 0; i < pass.size(); ++i) {
      const auto row = static_cast<int64_t>(i);
      GradientSample& s = samples[pass[i].slot];
      s.step = step;
      s.parameter = sampled[pass[i].slot]->first;
      s.loss_scale = loss_scale;
      s.numel = pass[i].flat.numel();
      const auto n = static_cast<double>(std::max<int64_t>(1, s.numel));
      s.zero_fraction = acc[row][kZeros] / n;
      s.nonfinite_fraction = acc[row][kNonfinite] / n;
      for (const FloatFormatLimits& f : kFloatFormats) {
        const int base = kFormatCounts + kCountsPerFormat * static_cast<int>(f.format);
        set_range_shares(s, f.format, {acc[row][base] / n, acc[row][base + 1] / n, acc[row][base + 2] / n});
      }
      s.min_abs_nonzero = std::isfinite(acc[row][kMinNonzero]) ? acc[row][kMinNonzero] : 0.0;
      s.max_abs = acc[row][kMaxAbs];
      s.norm = acc[row][kNorm];
      for (int b = 0; b < kGradBins; ++b) s.log2_histogram[b] = static_cast<int64_t>(acc[row][kScalars + b]);
    }
  }
  return samples;
}

}  // namespace ampscope::profiler
