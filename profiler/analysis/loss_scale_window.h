#pragma once
// Which loss scales would carry a run's gradients in fp16: from the least scale that keeps
// all but a small share of the nonzero gradient elements from flushing to zero, to the
// greatest at which the largest gradient does not overflow. Powers of two, as GradScaler
// moves the scale (from 2^16, ×2 and ×0.5).
//
// The gradient histograms' bins are [2^k, 2^(k+1)), so at a power-of-two scale the share a
// cast flushes is exact (but for elements exactly at the tie, min_subnormal / 2).
//
// Measured on the unscaled gradients of a run in another precision (fp32, bf16), it answers
// "could this run train in fp16, and at what scale?". In an fp16 run the backward has
// already flushed what fp16 could not hold (those elements are zeros, not counted), so
// there the lower end reads too low: views give the window for other precisions only.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/float_formats.h"
#include "profiler/records.h"

namespace ampscope::profiler {

// At most this share of the nonzero elements may flush to zero at the window's low end.
inline constexpr double kLossScaleWindowFlushShare = 0.001;
// torch.amp.GradScaler's init_scale.
inline constexpr int kGradScalerInitLog2 = 16;

struct LossScaleWindow {
  int64_t step = 0;
  FloatFormat format = FloatFormat::fp16;
  double flush_share = kLossScaleWindowFlushShare;
  int lowest_log2 = 0;   // the least 2^m at which at most flush_share of the nonzero elements flush
  int highest_log2 = 0;  // the greatest 2^m at which the largest |g| stays finite
  double max_abs = 0.0;  // the largest finite |g|
  // Where no scale fits, what the greatest one loses: the share of the nonzero elements
  // that flush to zero at 2^highest_log2 (exact), and at most what share of the gradients'
  // L2 norm they carry (from the bins' upper edges). Many flushed elements can carry next
  // to nothing of the update: this says whether fp16 at that scale would matter.
  double flushed_at_highest = 0.0;
  double flushed_norm_share_at_highest = 0.0;
  bool fits() const { return lowest_log2 <= highest_log2; }
};

// Of one sampled step's gradients (unscaled); nullopt when none is nonzero and finite.
// Scales range over float32's (2^-126 to 2^127), the dtype GradScaler keeps its scale in.
std::optional<LossScaleWindow> loss_scale_window(const std::vector<GradientSample>& samples,
                                                 FloatFormat format = FloatFormat::fp16,
                                                 double flush_share = kLossScaleWindowFlushShare);

// One sentence, as summary, the verdict, the report, the GUI and the JSON's text give it:
// "these gradients fit fp16 at loss scales from 2^4 to 2^21 (...); GradScaler starts at 2^16",
// or why no scale does.
std::string loss_scale_window_text(const LossScaleWindow& w);

}  // namespace ampscope::profiler
