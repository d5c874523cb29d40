#pragma once
// Inside precision readiness's batched pass (quantization_sim.h): the planned
// matrices, and what the two ways of running a pass share. A pass runs either as
// ATen ops on any device (quantization_sim.cpp, the reference) or, for CPU tensors,
// on the host alone (quantization_pass_cpu.cpp): there some 640 small ATen ops a pass,
// a few microseconds of dispatch each, were most of a 64-layer MLP's sample.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "profiler/analysis/quantization_readiness.h"
#include "profiler/cuda/quantization_element_math.h"

namespace ampscope::profiler {

// Rows are padded to a multiple of the widest block, so no block spans two rows
// and a 32-block is two 16-blocks.
inline constexpr int64_t kRowAlign = 32;

inline int64_t padded_width(int64_t cols) { return (cols + kRowAlign - 1) / kRowAlign * kRowAlign; }

// One matrix of a pass: its rows as they go into the buffer.
struct PlannedMatrix {
  at::Tensor source;  // any shape whose last dimension is cols
  int64_t rows = 0, cols = 0, padded_cols = 0;
  at::Tensor full_amax;  // rows sampled: max |x| of the whole matrix (0-dim float32), else undefined
  int64_t padded() const { return rows * padded_cols; }
};

// The element's grid for round_to_grid, and a format's element loop (its clamp,
// saturation test, grid and dequantization rule).
RoundingGrid rounding_grid(QuantElement e);
ElementFormat element_format(const QuantFormatSpec& spec);

// The matrix's rows into `out` as float32 magnitudes, non-finite values as 0, each
// row padded with zeros (rows * padded_cols floats), where packs_on_cpu.
bool packs_on_cpu(const PlannedMatrix& m);
void pack_rows_cpu(const PlannedMatrix& m, float* out);

// A pass's result, [matrices, kQuantFormatCount, kQuantSumColumns] float64, from
// what both ways compute: per_matrix [matrices, block_sum_columns(kQuantFormatCount)]
// float64 (quantization_element_math.h's columns), matrix_amax [matrices] float32,
// scale_range [matrices, kQuantFormatCount, 2] float64: the smallest and largest
// dequantization multiplier of the matrix's scaling groups that hold a nonzero
// element (+inf and 0 where none does; their log2 is taken here).
at::Tensor assemble_pass_sums(const at::Tensor& per_matrix, const at::Tensor& matrix_amax,
                              const at::Tensor& scale_range);

// A pass of CPU matrices (every one packs_on_cpu) on the host: the same numbers as
// the ATen path's, bit for bit but for the order of the sums.
at::Tensor pass_sums_cpu(const std::vector<PlannedMatrix>& pass);

}  // namespace ampscope::profiler
