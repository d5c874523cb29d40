#pragma once
// Range statistics of unscaled gradients against the ranges of fp16, bf16 and
// fp8 (records.h GradientSample, float_formats.h). Everything is computed on the gradients' device; the results
// of all parameters come back in one device-to-host transfer.
#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "profiler/capture/range_stats_cpu.h"
#include "profiler/records.h"

namespace ampscope::profiler {

// `parameters`: (name, parameter) pairs whose .grad() holds the unscaled
// gradient; parameters without a gradient are skipped. `loss_scale` is the
// scale in force (1 without a scaler): the format shares are for g * loss_scale,
// the values the fp16 backward actually carried. No host sync but the one
// transfer of all parameters' results.
std::vector<GradientSample> gradient_range_stats(
    int64_t step, const std::vector<std::pair<std::string, at::Tensor>>& parameters, double loss_scale,
    RangeKernel kernel = RangeKernel::best);

}  // namespace ampscope::profiler
