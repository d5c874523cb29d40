#pragma once
// Per float format, how many elements of each member of a batched pass a cast would
// flush to zero, leave subnormal, or overflow (float_formats.h cast_outcome,
// elementwise), as device tensors: no host sync. Shared by the gradient and
// activation statistics.
#include <ATen/core/Tensor.h>

#include "profiler/capture/batched_pass.h"
#include "profiler/float_formats.h"

namespace ampscope::profiler {

inline constexpr int kCountsPerFormat = 3;  // flushed to zero, subnormal, overflow

// `magnitudes`: |x| (scaled as the format would see it), laid out as seg.values();
// `nonzero`: x nonzero and finite. Returns [members, kCountsPerFormat *
// kFloatFormatCount] float64 counts, in FloatFormat order.
//
// One pass over the elements whatever the number of formats: each magnitude's place
// among all formats' bounds (one bucketize), a histogram of those places per member
// (one index_add_), then each count a difference of cumulative bins. It replaced 12
// masks, each with its own segmented count, over every element (issue 27).
at::Tensor format_counts(const at::Tensor& magnitudes, const at::Tensor& nonzero, const Segments& seg);

}  // namespace ampscope::profiler
