#pragma once
// block_sums_cpu's per-matrix sums on a CUDA GPU, in one read of each element
// (profiler/cuda/block_sums_kernel.cu): built where the CUDA compiler was found
// (AMPSCOPE_HAVE_CUDA_KERNELS), else block_sums_on_cuda is false and the ATen ops
// do the pass.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "profiler/cuda/quantization_element_math.h"

namespace ampscope::profiler {

// One format's factors per scaling group, float32 on the magnitudes' device.
struct BlockFormatFactors {
  at::Tensor quantize, dequantize;
  bool groups_of_16 = false;
  ElementFormat element;
};

// Whether this build has the kernel (a CUDA compiler was found; profiler/capture/own_cuda_kernels.h).
bool block_sums_kernel_built();

// Whether block_sums_cuda can sum these magnitudes: the kernel is built and they are on a CUDA device.
bool block_sums_on_cuda(const at::Tensor& magnitudes);

// As block_sums_cpu (quantization_block_sums_cpu.h): magnitudes [blocks, 32] float32,
// blocks_per_matrix (host), inverse_amax [matrices] float32; the sums
// [matrices, block_sum_columns(formats)] float64 on the device, without a host sync.
// Counts equal the CPU kernel's; the sums of squares agree up to their order.
at::Tensor block_sums_cuda(const at::Tensor& magnitudes, const std::vector<int64_t>& blocks_per_matrix,
                           const at::Tensor& inverse_amax, const std::vector<BlockFormatFactors>& formats);

}  // namespace ampscope::profiler
