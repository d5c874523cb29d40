#pragma once
// Which of ampscope's own CUDA kernels (profiler/cuda/) this build runs on a GPU, by
// name; the others' work is done by ATen ops there (many launches: issue 27). Each
// launcher's file answers for itself, because it is compiled once for the programs and
// again for the Python module (cmake/AmpscopeDependencies.cmake), and a build where the
// two differ measures one thing and ships another. `ampscope --version` and the module's
// own_cuda_kernels() print it; tests/build/check_own_cuda_kernels.py holds them equal.
#include <string_view>
#include <vector>

#include "profiler/capture/quantization_block_sums_cuda.h"
#include "profiler/capture/range_stats_cuda.h"

namespace ampscope::profiler {

// Views of literals: g++ 13 took the inlined std::string copies for writes out of bounds
// (-Wstringop-overflow, the GPU machine's only two warnings).
inline std::vector<std::string_view> own_cuda_kernels() {
  std::vector<std::string_view> built;
  if (range_stats_kernel_built()) built.emplace_back("range statistics");
  if (block_sums_kernel_built()) built.emplace_back("readiness sums");
  return built;
}

}  // namespace ampscope::profiler
