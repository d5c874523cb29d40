#include "profiler/analysis/loss_scale_window.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "profiler/number_text.h"

namespace ampscope::profiler {
namespace {

constexpr int kFloatScaleLog2Min = -126;  // float32's smallest normal
constexpr int kFloatScaleLog2Max = 127;   // below float32's max

std::string power_of_two(int log2) { return "2^" + std::to_string(log2); }

}  // namespace

std::optional<LossScaleWindow> loss_scale_window(const std::vector<GradientSample>& samples, FloatFormat format,
                                                 double flush_share) {
  std::array<int64_t, kGradBins> counts{};
  // The first bin holds everything below 2^(kGradLog2Min + 1), down to the sample's smallest
  // nonzero |g|: taken as all that small, it flushes while that does (never fewer flushed
  // than a cast would flush). Without a smallest (0: unknown), at every scale.
  struct Tail {
    int64_t count;
    double min_abs;
  };
  std::vector<Tail> tails;
  int64_t nonzero = 0;
  double norm2 = 0;
  LossScaleWindow w;
  w.format = format;
  w.flush_share = flush_share;
  for (const GradientSample& s : samples) {
    w.step = s.step;
    for (int b = 1; b < kGradBins; ++b) counts[b] += s.log2_histogram[b];
    if (s.log2_histogram[0] > 0) tails.push_back({s.log2_histogram[0], s.min_abs_nonzero});
    nonzero += std::accumulate(s.log2_histogram.begin(), s.log2_histogram.end(), int64_t{0});
    w.max_abs = std::max(w.max_abs, s.max_abs);
    if (std::isfinite(s.norm)) norm2 += s.norm * s.norm;
  }
  if (nonzero == 0 || !(w.max_abs > 0) || !std::isfinite(w.max_abs)) return std::nullopt;

  const FloatFormatLimits& f = float_format(format);
  // Bin k = [2^k, 2^(k+1)) times 2^m lies wholly at or below min_subnormal / 2 = 2^(e-1),
  // where a cast flushes it, when k + m + 1 <= e - 1.
  const int e = static_cast<int>(std::lround(log2_min_subnormal(f)));
  // The elements a cast flushes at 2^m, and an upper bound on their squared L2 norm
  // (each at its bin's upper edge).
  struct Flushed {
    int64_t count = 0;
    double norm2 = 0;
  };
  const auto flushed_at = [&](int m) {
    Flushed out;
    const double tail_edge2 = std::ldexp(1.0, 2 * (kGradLog2Min + 1));
    for (const Tail& t : tails)
      if (!(t.min_abs > 0) || std::ldexp(t.min_abs, m) <= f.min_subnormal / 2) {
        out.count += t.count;
        out.norm2 += static_cast<double>(t.count) * tail_edge2;
      }
    for (int b = 1; b < kGradBins && kGradLog2Min + b <= e - 2 - m; ++b) {
      out.count += counts[b];
      out.norm2 += static_cast<double>(counts[b]) * std::ldexp(1.0, 2 * (kGradLog2Min + b + 1));
    }
    return out;
  };
  const auto flushed = [&](int m) { return flushed_at(m).count; };
  const double allowed = flush_share * static_cast<double>(nonzero);
  w.lowest_log2 = kFloatScaleLog2Max + 1;
  for (int m = kFloatScaleLog2Min; m <= kFloatScaleLog2Max; ++m)
    if (static_cast<double>(flushed(m)) <= allowed) {
      w.lowest_log2 = m;
      break;
    }
  const auto overflows = [&](int m) {
    const double scaled = std::ldexp(w.max_abs, m);
    return f.overflow_at_bound ? scaled >= f.overflow_bound : scaled > f.overflow_bound;
  };
  w.highest_log2 = kFloatScaleLog2Min - 1;
  for (int m = kFloatScaleLog2Max; m >= kFloatScaleLog2Min; --m)
    if (!overflows(m)) {
      w.highest_log2 = m;
      break;
    }
  if (!w.fits() && w.highest_log2 >= kFloatScaleLog2Min) {
    const Flushed lost = flushed_at(w.highest_log2);
    w.flushed_at_highest = static_cast<double>(lost.count) / static_cast<double>(nonzero);
    w.flushed_norm_share_at_highest = norm2 > 0 ? std::min(1.0, std::sqrt(lost.norm2 / norm2)) : 1.0;
  }
  return w;
}

std::string loss_scale_window_text(const LossScaleWindow& w) {
  const std::string format(float_format(w.format).name);
  const std::string lowest = power_of_two(w.lowest_log2), highest = power_of_two(w.highest_log2);
  const std::string flushed = text::percent(w.flush_share);
  // What the greatest scale loses: many flushed elements may carry next to nothing.
  const std::string at_highest =
      w.highest_log2 >= kFloatScaleLog2Min
          ? ". At " + highest + ", " + text::percent(w.flushed_at_highest) +
                " of the nonzero elements flush to zero, carrying at most " +
                text::percent(w.flushed_norm_share_at_highest) + " of the gradients' L2 norm"
          : "";
  if (w.lowest_log2 > kFloatScaleLog2Max)
    return "no loss scale fits these gradients in " + format + ": more than " + flushed +
           " of the nonzero elements flush to zero at any float32 scale" + at_highest + "; bf16 has fp32's range";
  if (!w.fits())
    return "no loss scale fits these gradients in " + format + ": keeping all but " + flushed +
           " of the nonzero elements from flushing to zero needs " + lowest + ", and above " + highest +
           " the largest (|g| = " + text::sig3(w.max_abs) + ") overflows" + at_highest + "; bf16 has fp32's range";
  std::string where;
  if (kGradScalerInitLog2 > w.highest_log2)
    where = ", above which it backs off on overflowing steps";
  else if (kGradScalerInitLog2 < w.lowest_log2)
    where = ", below the window: it grows only after growth_interval clean steps";
  return "these gradients fit " + format + " at loss scales from " + lowest + " to " + highest +
         " (below " + lowest + " more than " + flushed + " of the nonzero elements flush to zero; above " +
         highest + " the largest, |g| = " + text::sig3(w.max_abs) + ", overflows); GradScaler starts at " +
         power_of_two(kGradScalerInitLog2) + where;
}

}  // namespace ampscope::profiler
