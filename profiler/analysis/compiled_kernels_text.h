#pragma once
// How a compiled kernel's fused graph ops read, for `ampscope summary`, the HTML
// report and the GUI alike: grouped by module and autocast category, op names
// without their namespace, repeats counted.
#include <string>

#include "profiler/analysis/compiled_kernels.h"

namespace ampscope::profiler {

// "layers.1 unchanged: mul x3, erf, add; layers.1 autocast_cast: convert_element_type x2";
// a node inductor made itself reads "<node> (inductor's)". "" for a kernel with no listed ops.
std::string fused_ops_text(const CompiledKernelRow& row);

// "graph_0_cpp_fused_gelu_1", or an extern call with its place among the graph's
// calls of that op: "aten::addmm #2".
std::string compiled_call_text(const CompiledKernelRow& row);

// Where the compiled graphs' time went: "93% in the kernels below, 0.3% in other
// recorded ops, 6.7% in the generated wrapper itself", and where they ran on a GPU
// "; on the GPU, 97% in the kernels below and 3% in kernels inductor did not list",
// and when graphs ran more than once the same after their first calls (shares only:
// each caller states the times in its own unit, total or per step).
std::string compiled_share_text(const CompiledTimeShare& share);

}  // namespace ampscope::profiler
