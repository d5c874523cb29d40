#include "profiler/capture/quantization_block_sums_cpu.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstring>

namespace ampscope::profiler {
namespace {

// GCC/Clang vector extensions: four floats, one register on baseline x86-64
// (SSE2) and on ARM (NEON). Not eight: without AVX, GCC splits a 32-byte vector's
// arithmetic in two but its compares into one scalar compare per lane.
using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = int32_t __attribute__((vector_size(16)));
using u32x4 = uint32_t __attribute__((vector_size(16)));
constexpr int kLanes = 4;
constexpr int kChunksPerBlock = kBlockSumsBlock / kLanes;
// Blocks summed in float lanes before they go into the double totals: each lane
// then adds 128 terms, far from float's rounding trouble.
constexpr int64_t kBlocksPerFlush = 16;
// Blocks per task of at::parallel_for (within one matrix): 32k elements.
constexpr int64_t kGrainBlocks = 1024;

f32x4 load(const float* p) {
  f32x4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
f32x4 splat(float x) { return f32x4{} + x; }
// 1.0 where the mask is set (a lane of all ones), else 0.0.
f32x4 ones_where(i32x4 mask) { return std::bit_cast<f32x4>(mask & std::bit_cast<i32x4>(splat(1.0f))); }

// a where the mask is set, else b, as bit operations: GCC turns a vector `?:` on
// floats into one scalar compare per lane.
f32x4 select(i32x4 mask, f32x4 a, f32x4 b) {
  return std::bit_cast<f32x4>((mask & std::bit_cast<i32x4>(a)) | (~mask & std::bit_cast<i32x4>(b)));
}
i32x4 select(i32x4 mask, i32x4 a, i32x4 b) { return (mask & a) | (~mask & b); }

// round_to_grid (quantization_element_math.h) on four lanes.
f32x4 round_to_grid(f32x4 x, RoundingGrid grid) {
  const i32x4 exponent_field = std::bit_cast<i32x4>(std::bit_cast<u32x4>(x) >> 23);
  const i32x4 floor_field = i32x4{} + (grid.min_normal_exponent + 127);
  const i32x4 field = select(exponent_field > floor_field, exponent_field, floor_field) + (23 - grid.mantissa_bits);
  const f32x4 magic = std::bit_cast<f32x4>(field << 23);
  return (x + magic) - magic;
}

struct Lanes {
  f32x4 a{}, b{}, c{};
};

// Adds four lanes to a double total in a fixed order.
void flush(const f32x4& lanes, double& total) {
  float v[kLanes];
  std::memcpy(v, &lanes, sizeof v);
  total += (static_cast<double>(v[0]) + v[1]) + (static_cast<double>(v[2]) + v[3]);
}

// One format over blocks [begin, end) of one matrix: quantize_element
// (quantization_element_math.h) on four lanes.
template <bool kDivide, bool kSaturatesAtBound>
Lanes format_blocks(const float* magnitudes, int64_t begin, int64_t end, float inverse_amax, const BlockFormat& f) {
  Lanes sums;  // saturated, nonzero dequantized, squared error
  const ElementFormat& e = f.element;
  const f32x4 bound = splat(e.saturation_bound), max = splat(e.max), inverse = splat(inverse_amax);
  for (int64_t b = begin; b < end; ++b) {
    const float* m = magnitudes + b * kBlockSumsBlock;
    for (int c = 0; c < kChunksPerBlock; ++c) {
      // The chunk's group: the block, or its 16-block half.
      const int64_t group = f.groups_of_16 ? 2 * b + c / (kChunksPerBlock / 2) : b;
      const f32x4 x = load(m + c * kLanes);
      const f32x4 scaled = x * f.quantize[group];
      sums.a += ones_where(kSaturatesAtBound ? scaled >= bound : scaled > bound);
      const f32x4 rounded = round_to_grid(select(scaled < max, scaled, max), e.grid);
      const f32x4 dequantized = kDivide ? rounded / f.dequantize[group] : rounded * f.dequantize[group];
      sums.b += ones_where(dequantized != 0.0f);
      const f32x4 error = (dequantized - x) * inverse;
      sums.c += error * error;
    }
  }
  return sums;
}

Lanes format_blocks(const float* magnitudes, int64_t begin, int64_t end, float inverse_amax, const BlockFormat& f) {
  if (f.element.divide) {
    return f.element.saturates_at_bound ? format_blocks<true, true>(magnitudes, begin, end, inverse_amax, f)
                                : format_blocks<true, false>(magnitudes, begin, end, inverse_amax, f);
  }
  return f.element.saturates_at_bound ? format_blocks<false, true>(magnitudes, begin, end, inverse_amax, f)
                              : format_blocks<false, false>(magnitudes, begin, end, inverse_amax, f);
}

// Blocks [begin, end) of one matrix into its row of totals.
void chunk(const float* magnitudes, int64_t begin, int64_t end, float inverse_amax,
           std::span<const BlockFormat> formats, double* totals) {
  const f32x4 inverse = splat(inverse_amax);
  for (int64_t from = begin; from < end; from += kBlocksPerFlush) {
    const int64_t to = std::min(end, from + kBlocksPerFlush);
    f32x4 nonzero{}, signal{};
    for (int64_t b = from; b < to; ++b) {
      for (int c = 0; c < kChunksPerBlock; ++c) {
        const f32x4 x = load(magnitudes + b * kBlockSumsBlock + c * kLanes);
        nonzero += ones_where(x != 0.0f);
        const f32x4 scaled = x * inverse;
        signal += scaled * scaled;
      }
    }
    flush(nonzero, totals[0]);
    flush(signal, totals[1]);
    double* per_format = totals + 2;
    for (const BlockFormat& f : formats) {
      const Lanes sums = format_blocks(magnitudes, from, to, inverse_amax, f);
      flush(sums.a, per_format[0]);
      flush(sums.b, per_format[1]);
      flush(sums.c, per_format[2]);
      per_format += 3;
    }
  }
}

}  // namespace

void block_sums_cpu(const float* magnitudes, std::span<const int64_t> blocks_per_matrix,
                    std::span<const float> inverse_amax, std::span<const BlockFormat> formats, double* out) {
  const int columns = block_sum_columns(static_cast<int>(formats.size()));
  // Tasks: each matrix cut into runs of at most kGrainBlocks blocks, each run summed
  // into its own row; the rows of a matrix are added up afterwards in task order,
  // so the result does not depend on the number of threads.
  struct Task {
    int64_t matrix, begin, end;
  };
  std::vector<Task> tasks;
  int64_t first = 0;
  for (size_t m = 0; m < blocks_per_matrix.size(); ++m) {
    const int64_t end = first + blocks_per_matrix[m];
    for (int64_t b = first; b < end; b += kGrainBlocks)
      tasks.push_back({static_cast<int64_t>(m), b, std::min(end, b + kGrainBlocks)});
    first = end;
  }
  std::vector<double> partial(tasks.size() * static_cast<size_t>(columns), 0.0);
  at::parallel_for(0, static_cast<int64_t>(tasks.size()), 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const Task& task = tasks[static_cast<size_t>(t)];
      chunk(magnitudes, task.begin, task.end, inverse_amax[static_cast<size_t>(task.matrix)], formats,
            partial.data() + t * columns);
    }
  });
  std::fill(out, out + blocks_per_matrix.size() * static_cast<size_t>(columns), 0.0);
  for (size_t t = 0; t < tasks.size(); ++t)
    for (int c = 0; c < columns; ++c) out[tasks[t].matrix * columns + c] += partial[t * columns + c];
}

}  // namespace ampscope::profiler
