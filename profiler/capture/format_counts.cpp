#include "profiler/capture/format_counts.h"

#include <ATen/ATen.h>

namespace ampscope::profiler {

std::vector<at::Tensor> format_counts(const at::Tensor& magnitudes, const at::Tensor& finite,
                                      const at::Tensor& nonzero, const MaskCount& count) {
  std::vector<at::Tensor> out;
  out.reserve(static_cast<size_t>(kCountsPerFormat) * kFloatFormatCount);
  for (const FloatFormatLimits& f : kFloatFormats) {
    const double flush = f.min_subnormal / 2, normal = f.min_normal - f.min_subnormal / 2;
    out.push_back(count(nonzero & (magnitudes <= flush)));
    out.push_back(count(nonzero & (magnitudes > flush) & (magnitudes < normal)));
    out.push_back(
        count(finite & (f.overflow_at_bound ? magnitudes >= f.overflow_bound : magnitudes > f.overflow_bound)));
  }
  return out;
}

}  // namespace ampscope::profiler
