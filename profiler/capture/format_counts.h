#pragma once
// Per float format, how many elements of a tensor a cast would flush to zero,
// leave subnormal, or overflow (float_formats.h cast_outcome, elementwise), as
// device scalars: no host sync. Shared by the gradient and activation statistics.
#include <ATen/core/Tensor.h>

#include <vector>

#include "profiler/float_formats.h"

namespace ampscope::profiler {

inline constexpr int kCountsPerFormat = 3;  // flushed to zero, subnormal, overflow

// `magnitudes`: |x| in float64 (scaled as the format would see it); `finite`
// and `nonzero` (nonzero and finite) masks of x. Returns kCountsPerFormat *
// kFloatFormatCount float64 scalars of shape [1], in FloatFormat order.
std::vector<at::Tensor> format_counts(const at::Tensor& magnitudes, const at::Tensor& finite,
                                      const at::Tensor& nonzero);

}  // namespace ampscope::profiler
