#pragma once
// Per float format, how many elements of each member of a batched pass a cast would
// flush to zero, leave subnormal, or overflow (float_formats.h cast_outcome,
// elementwise), as device tensors: no host sync. Shared by the gradient and
// activation statistics.
#include <ATen/core/Tensor.h>

#include <vector>

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

// The two halves of it, for a caller that makes the histogram of places itself (the
// CPU's one-loop statistics, range_stats_cpu.h): every format's bounds for
// magnitudes of `dtype` (float32 or float64), sorted and distinct, each taken as
// "magnitude >= bound"; a magnitude's place is how many of them are <= it. And the
// counts from [members, bounds + 1] float64 histograms of the places of each
// member's nonzero finite magnitudes.
std::vector<double> format_bounds(at::ScalarType dtype);
at::Tensor format_counts_from_places(const at::Tensor& histogram, at::ScalarType dtype);

}  // namespace ampscope::profiler
