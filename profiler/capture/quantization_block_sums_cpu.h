#pragma once
// Precision readiness's per-matrix sums on the CPU in one read of each element,
// for all six formats at once (profiler/capture/quantization_sim.cpp). The same
// sums as ATen ops are some 80 passes over every element, one per op, each reading
// and writing buffers that outgrow the caches: on the 2-core CI machine that was
// 0.75 of a training step at 64 layers (issue 27). On a GPU those ops are a few
// milliseconds of memory traffic and stay as they are.
//
// Plain C++ over raw float arrays; the caller owns the buffers. Every value is
// computed as the ATen path computes it (the same float32 multiplies, clamps,
// round-to-nearest-even and divides, in the same order), so the dequantized
// values agree bit for bit; only the order of the sums differs.
#include <cstdint>
#include <span>

namespace ampscope::profiler {

// A floating grid with `mantissa_bits` stored bits and normal exponents from
// `min_normal_exponent` up (subnormals below it): fp8 e4m3 (3, -6), e5m2 (2, -14),
// e2m1 (1, 0).
struct RoundingGrid {
  int mantissa_bits;
  int min_normal_exponent;
};

// A magnitude 0 <= x <= the format's max rounded to nearest even onto the grid.
// The grid's step at x is 2^(e - mantissa_bits) with e = max(exponent of x, the min
// normal exponent); M = 2^(e + 23 - mantissa_bits) has exactly that float32 ulp, and
// M > x, so x + M rounds x to the step (ties to even: M's last mantissa bit is 0,
// so the sum's parity is that of x's grid mantissa) and subtracting M gives it back
// exactly. The same numbers as a cast to the format and back (tested against
// LibTorch's fp8 casts), without a branch, so the kernel's loops vectorise. (Without
// -ffast-math the compiler keeps (x + M) - M as written.)
float round_to_grid(float x, RoundingGrid grid);

// One format over the blocks: per scaling group (a 32-block, or a 16-block when
// `groups_of_16`), the multiplier before the clamp and the dequantization factor.
struct BlockFormat {
  const float* quantize = nullptr;
  const float* dequantize = nullptr;
  bool divide = false;  // dequantized = rounded / dequantize (torchao's fp8), else rounded * dequantize
  bool groups_of_16 = false;
  float max = 0;               // the clamp
  float saturation_bound = 0;  // saturated: scaled >= bound (saturates_at_bound) or > bound
  bool saturates_at_bound = false;
  RoundingGrid grid{};
};

inline constexpr int kBlockSumsBlock = 32;
// Columns of block_sums_cpu's output per matrix: nonzero |x|, sum (|x| / amax)^2,
// then per format saturated, nonzero dequantized, sum ((dq - |x|) / amax)^2.
constexpr int block_sum_columns(int formats) { return 2 + 3 * formats; }

// magnitudes: the matrices' 32-blocks end to end ([blocks, 32] float32, |x|, finite),
// blocks_per_matrix[m] of them for matrix m; inverse_amax: per matrix, 1 / its amax;
// out: [matrices, block_sum_columns(formats.size())] float64. Each matrix's sums
// are the same whatever the number of ATen intra-op threads that run it.
void block_sums_cpu(const float* magnitudes, std::span<const int64_t> blocks_per_matrix,
                    std::span<const float> inverse_amax, std::span<const BlockFormat> formats, double* out);

}  // namespace ampscope::profiler
