#pragma once
// Precision readiness's per-matrix sums on the CPU in one read of each element,
// for all six formats at once (profiler/capture/quantization_pass.cpp). The same
// sums as ATen ops are some 80 passes over every element, one per op, each reading
// and writing buffers that outgrow the caches: on the 2-core CI machine that was
// 0.75 of a training step at 64 layers (issue 27); on an H200, some 150 ms of one
// sample of a 12-layer GPT, mostly kernel launches.
//
// Plain C++ over raw float arrays; the caller owns the buffers. Every value is
// computed as the ATen path computes it (the same float32 multiplies, clamps,
// round-to-nearest-even and divides, in the same order: quantization_element_math.h,
// four lanes at a time), so the dequantized values agree bit for bit; only the
// order of the sums differs. The GPU's twin is profiler/cuda/block_sums_kernel.cu.
#include <cstdint>
#include <span>

#include "profiler/cuda/quantization_element_math.h"

namespace ampscope::profiler {

// One format over the blocks: per scaling group (a 32-block, or a 16-block when
// `groups_of_16`), the multiplier before the clamp and the dequantization factor.
struct BlockFormat {
  const float* quantize = nullptr;
  const float* dequantize = nullptr;
  bool groups_of_16 = false;
  ElementFormat element;
};

// magnitudes: the matrices' 32-blocks end to end ([blocks, 32] float32, |x|, finite),
// blocks_per_matrix[m] of them for matrix m; inverse_amax: per matrix, 1 / its amax;
// out: [matrices, block_sum_columns(formats.size())] float64. Each matrix's sums
// are the same whatever the number of ATen intra-op threads that run it.
void block_sums_cpu(const float* magnitudes, std::span<const int64_t> blocks_per_matrix,
                    std::span<const float> inverse_amax, std::span<const BlockFormat> formats, double* out);

}  // namespace ampscope::profiler
