#pragma once
// range_stats_cpu's table on a CUDA GPU, in one read of each element
// (profiler/cuda/range_stats_kernel.cu): built where the CUDA compiler was found
// (AMPSCOPE_HAVE_CUDA_KERNELS), else range_stats_on_cuda is false and the ATen ops
// do the pass.
#include <ATen/core/Tensor.h>

#include <vector>

#include "profiler/capture/batched_pass.h"

namespace ampscope::profiler {

// Whether this build has the kernel (a CUDA compiler was found; profiler/capture/own_cuda_kernels.h).
bool range_stats_kernel_built();

// Whether range_stats_cuda reads every member of the pass: the kernel is built, and
// the members are contiguous float32, float64, bf16 or fp16 on one CUDA device.
bool range_stats_on_cuda(const std::vector<PassMember>& members);

// As range_stats_cpu (range_stats_cpu.h): the same table, on the members' device,
// without a host sync; counts, extremes and histograms equal, the sum of squares up
// to the order of its additions.
at::Tensor range_stats_cuda(const std::vector<PassMember>& members, at::ScalarType compute, double magnitude_scale,
                            const std::vector<double>& bounds, int log2_min = 0, int log2_bins = 0);

// The table in one read of each element: range_stats_cpu or range_stats_cuda, whichever
// reads every member; an undefined tensor where neither does (the ATen ops then).
at::Tensor range_stats_one_read(const std::vector<PassMember>& members, at::ScalarType compute, double magnitude_scale,
                                const std::vector<double>& bounds, int log2_min = 0, int log2_bins = 0);

}  // namespace ampscope::profiler
