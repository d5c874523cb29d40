#pragma once
// `ampscope summary`'s precision readiness table (issue #30): layers x FP8, MXFP8
// and NVFP4, a verdict per cell with the metric that decided it, then the tensors
// measured and the thresholds, each said once.
#include <cstdio>

#include "profiler/analysis/quantization_readiness.h"

namespace ampscope::cli {

// Prints nothing for a session without readiness (none sampled, or older).
void print_readiness(std::FILE* out, const profiler::ReadinessTotals& totals);

}  // namespace ampscope::cli
