#pragma once
// Simulated quantize -> dequantize of a tensor to the formats of
// profiler/analysis/quantization_readiness.h, on the tensor's own device, in a
// fixed number of tensor ops per format (no per-element host loop, no host sync
// until the caller reads the sums back).
#include <ATen/core/Tensor.h>

#include <array>

#include "profiler/analysis/quantization_readiness.h"

namespace ampscope::profiler {

// The tensor as the 2-D matrix its GEMM scales: rows get rowwise scales, blocks
// run along the last dimension (the GEMM's reduction dimension). A weight
// [out, in, ...] is [out, in * ...]; an activation or gradient [..., features]
// is [tokens, features]; a 1-D tensor is one row. float32, non-finite values as 0.
at::Tensor scaling_matrix(const at::Tensor& t, TensorRole role);

struct SimulatedQuantization {
  at::Tensor dequantized;  // float32, the matrix's shape
  // The dequantization multiplier of each scaling group, float32: [1, 1]
  // (tensorwise), [rows, 1] (rowwise), [rows, blocks] (block formats; a last
  // block that runs past the row is padded with zeros).
  at::Tensor scales;
  at::Tensor saturated;    // bool, the matrix's shape: clamped at the format's max
};

// `matrix`: 2-D float32 (scaling_matrix).
SimulatedQuantization simulate_quantization(const at::Tensor& matrix, QuantFormat format);

// Every format's sums for one matrix, as one float64 tensor [kQuantFormatCount,
// kQuantSumColumns] on the matrix's device: nothing is read back here.
inline constexpr int kQuantSumColumns = 7;
at::Tensor quantization_sums(const at::Tensor& matrix);
// One row set of quantization_sums, read on the host (after the caller's transfer).
std::array<QuantMetrics, kQuantFormatCount> read_quantization_sums(const at::Tensor& host_sums, int64_t elements);

}  // namespace ampscope::profiler
