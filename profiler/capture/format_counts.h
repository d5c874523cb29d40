#pragma once
// Per float format, how many elements of a tensor a cast would flush to zero,
// leave subnormal, or overflow (float_formats.h cast_outcome, elementwise), as
// device tensors: no host sync. Shared by the gradient and activation statistics.
#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "profiler/float_formats.h"

namespace ampscope::profiler {

inline constexpr int kCountsPerFormat = 3;  // flushed to zero, subnormal, overflow

// Turns a boolean mask into float64 counts: the whole tensor's (shape [1]) or
// one per segment (the gradient statistics' parameters, shape [P]).
using MaskCount = std::function<at::Tensor(const at::Tensor& mask)>;

// `magnitudes`: |x| (scaled as the format would see it); `finite` and `nonzero`
// (nonzero and finite) masks of x. Returns kCountsPerFormat * kFloatFormatCount
// counts made by `count`, in FloatFormat order.
std::vector<at::Tensor> format_counts(const at::Tensor& magnitudes, const at::Tensor& finite,
                                      const at::Tensor& nonzero, const MaskCount& count);

}  // namespace ampscope::profiler
