#pragma once
// Simulated quantize -> dequantize of tensors to the formats of
// profiler/analysis/quantization_readiness.h, on the tensors' own device, with no
// per-element host loop and no host sync until the caller reads the sums back.
//
// Many tensors go through one pass: their rows, each padded with zeros to a
// multiple of 32 columns, end to end in one buffer, so the number of ops a pass
// dispatches does not grow with the number of tensors (a sampled step's layers
// are measured together), and every scaling group (tensor, row, 16- or 32-block)
// is a segment of that buffer.
#include <ATen/core/Tensor.h>

#include <array>
#include <vector>

#include "profiler/analysis/quantization_readiness.h"

namespace ampscope::profiler {

// The tensor as the matrix its GEMM scales, a view where the layout allows: the
// last dimension is the GEMM's reduction dimension (blocks run along it, rowwise
// scales are per row), every other dimension is rows. A weight [out, in, ...] is
// [out, in * ...]; an activation or gradient [..., features] stays as it is; a
// convolution's input [N, C, ...] (channels_first) has its channels moved last;
// a 1-D tensor is one row. Any floating dtype; non-finite values count as 0.
at::Tensor scaling_matrix(const at::Tensor& t, TensorRole role, bool channels_first = false);

struct SimulatedQuantization {
  at::Tensor dequantized;  // float32 [rows, cols]
  // The dequantization multiplier of each scaling group, float32: [1, 1]
  // (tensorwise), [rows, 1] (rowwise), [rows, blocks] (block formats; a last
  // block that runs past the row is padded with zeros).
  at::Tensor scales;
  at::Tensor saturated;    // bool [rows, cols]: clamped at the format's max
};

// One matrix [rows, cols] element for element: what the tests compare with torchao.
SimulatedQuantization simulate_quantization(const at::Tensor& matrix, QuantFormat format);

// Every format's sums for each matrix (scaling_matrix), as one float64 tensor
// [matrices, kQuantFormatCount, kQuantSumColumns] on the first matrix's device.
// A pass holds up to 2^24 elements; a matrix larger than that is measured on
// evenly spaced rows (its tensorwise scales still from all of it), which bounds
// the pass's memory on the device whatever the model. Nothing is read back here.
inline constexpr int kQuantSumColumns = 7;
struct QuantizationSums {
  at::Tensor sums;
  std::vector<int64_t> elements;  // per matrix: how many elements were measured
  int64_t passes = 0;             // the batched passes it took (each a fixed number of ops)
};
// `best` sums a pass in one read of each element: on the CPU
// (quantization_block_sums_cpu.h) and on a CUDA GPU where the build has ampscope's
// kernels (quantization_block_sums_cuda.h; else the ATen ops); `aten` takes the ATen
// ops everywhere, the reference the tests hold both kernels to.
enum class QuantizationKernel { best, aten };
QuantizationSums quantization_sums(const std::vector<at::Tensor>& matrices,
                                   QuantizationKernel kernel = QuantizationKernel::best);
// The same with each matrix measured on at most sample_elements[i] elements (evenly
// spaced rows; at least one row); 0 or a missing entry means the pass's 2^24.
QuantizationSums quantization_sums(const std::vector<at::Tensor>& matrices, const std::vector<int64_t>& sample_elements,
                                   QuantizationKernel kernel = QuantizationKernel::best);

// One matrix's rows of the sums ([kQuantFormatCount, kQuantSumColumns]), read on
// the host after the caller's transfer.
std::array<QuantMetrics, kQuantFormatCount> read_quantization_sums(const at::Tensor& host_sums, int64_t elements);
// The same from the row's kQuantFormatCount * kQuantSumColumns doubles, without an ATen op.
std::array<QuantMetrics, kQuantFormatCount> read_quantization_sums(const double* row, int64_t elements);

}  // namespace ampscope::profiler
