#pragma once
// A comparison as terminal tables: per precision, and the ops that changed most.
#include <cstdio>

#include "profiler/analysis/comparison.h"

namespace ampscope::cli {

void print_comparison(std::FILE* out, const profiler::Comparison& comparison, size_t top_ops = 12);

}  // namespace ampscope::cli
