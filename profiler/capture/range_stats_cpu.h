#pragma once
// The range statistics of a batched pass (gradient_stats.cpp, activation_stats.cpp)
// on the CPU in one read of each element. As ATen ops they are some 20 passes over
// every element (masks, where, a float64 copy, segmented reductions, a histogram's
// index_add_), each a buffer the size of the pass: on the 2-core CI machine the
// gradients alone took 3.3 ms of a 64-layer MLP's 8 ms step (issue 27). A GPU has its
// twin, range_stats_cuda.h.
//
// Each member (tensor) is read in place, any of float32, float64, bf16, fp16,
// widened to the pass's compute type as the ATen path widens it, so every count and
// extreme is the same; the sum of squares differs only in its order of additions.
#include <ATen/core/Tensor.h>

#include <vector>

#include "profiler/capture/batched_pass.h"

namespace ampscope::profiler {

// `best`: range_stats_cpu wherever range_stats_on_cpu, range_stats_cuda wherever
// range_stats_on_cuda (range_stats_cuda.h), else ATen ops; `aten`: ATen ops
// everywhere, the reference the tests hold the one-read loops to.
enum class RangeKernel { best, aten };

// Columns of range_stats_cpu's table, one row per member.
enum RangeStatsColumn {
  kRangeZeros,         // x == 0
  kRangeNonfinite,     // inf or NaN
  kRangeMinNonzero,    // min |x| over nonzero finite x; +inf where none
  kRangeMaxAbs,        // max |x| over finite x; 0 where none
  kRangeSumSquares,    // sum x^2 over finite x
  kRangePlaces,        // then bounds.size() + 1 bins: the places of the nonzero finite magnitudes
};

// Whether range_stats_cpu reads every member of the pass (CPU, a dtype it widens).
bool range_stats_on_cpu(const std::vector<PassMember>& members);

// [members, kRangePlaces + bounds.size() + 1 + log2_bins] float64. The places: each
// nonzero finite |x| times `magnitude_scale`, in `compute` (float32 or float64, as
// format_counts sees it), counted by how many of `bounds` (format_bounds(compute))
// are <= it. With log2_bins > 0 a histogram of floor(log2 |x|) of the nonzero finite
// values follows, from log2_min, clamped into [log2_min, log2_min + log2_bins).
// Parallel over chunks of members; the result does not depend on the thread count.
at::Tensor range_stats_cpu(const std::vector<PassMember>& members, at::ScalarType compute, double magnitude_scale,
                           const std::vector<double>& bounds, int log2_min = 0, int log2_bins = 0);

}  // namespace ampscope::profiler
