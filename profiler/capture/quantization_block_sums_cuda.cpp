#include "profiler/capture/quantization_block_sums_cuda.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "profiler/capture/batched_pass.h"

#if AMPSCOPE_HAVE_CUDA_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "profiler/cuda/block_sums_kernel.h"
#endif

namespace ampscope::profiler {

#if AMPSCOPE_HAVE_CUDA_KERNELS
namespace kernels = cuda_kernels;

bool block_sums_kernel_built() { return true; }

bool block_sums_on_cuda(const at::Tensor& magnitudes) { return magnitudes.is_cuda(); }

at::Tensor block_sums_cuda(const at::Tensor& magnitudes, const std::vector<int64_t>& blocks_per_matrix,
                           const at::Tensor& inverse_amax, const std::vector<BlockFormatFactors>& formats) {
  TORCH_CHECK(magnitudes.is_cuda() && magnitudes.scalar_type() == at::kFloat,
              "block_sums_cuda: float32 magnitudes on a CUDA device");
  TORCH_CHECK(formats.size() <= static_cast<size_t>(kernels::kBlockSumsMaxFormats),
              "block_sums_cuda: too many formats");
  const at::Device device = magnitudes.device();
  const c10::cuda::CUDAGuard guard(device);
  std::vector<int64_t> tasks, first_task{0};
  int64_t first_block = 0;
  for (size_t m = 0; m < blocks_per_matrix.size(); ++m) {
    const int64_t end = first_block + blocks_per_matrix[m];
    for (int64_t b = first_block; b < end; b += kernels::kBlockSumsBlocksPerTask)
      tasks.insert(tasks.end(), {static_cast<int64_t>(m), b, std::min(end, b + kernels::kBlockSumsBlocksPerTask)});
    first_task.push_back(static_cast<int64_t>(tasks.size()) / kernels::kBlockSumsTaskFields);
    first_block = end;
  }
  TORCH_CHECK(first_block * kBlockSumsBlock == magnitudes.numel(), "block_sums_cuda: ", magnitudes.numel(),
              " magnitudes for ", first_block, " blocks");
  const int64_t matrices = static_cast<int64_t>(blocks_per_matrix.size());
  const int64_t task_count = first_task.back();
  const int64_t columns = block_sum_columns(static_cast<int>(formats.size()));
  const at::TensorOptions doubles = at::TensorOptions().dtype(at::kDouble).device(device);
  // Kept alive until the launch returns; the caching allocator orders their reuse after the kernels.
  const at::Tensor task_table = host_values_on(tasks.empty() ? std::vector<int64_t>{0} : tasks, device);
  const at::Tensor first = host_values_on(first_task, device);
  const at::Tensor values = magnitudes.contiguous();
  const at::Tensor inverse = inverse_amax.to(device, at::kFloat).contiguous();
  std::vector<at::Tensor> factors;
  kernels::BlockSumsLaunch launch{};
  for (size_t f = 0; f < formats.size(); ++f) {
    factors.push_back(formats[f].quantize.to(device, at::kFloat).contiguous());
    factors.push_back(formats[f].dequantize.to(device, at::kFloat).contiguous());
    launch.formats[f] = {factors[2 * f].const_data_ptr<float>(), factors[2 * f + 1].const_data_ptr<float>(),
                         formats[f].groups_of_16, formats[f].element};
  }
  const at::Tensor partial = at::empty({std::max<int64_t>(task_count, 1), columns}, doubles);
  at::Tensor sums = at::empty({matrices, columns}, doubles);
  launch.magnitudes = values.const_data_ptr<float>();
  launch.tasks = reinterpret_cast<const kernels::BlockSumsTask*>(task_table.const_data_ptr<int64_t>());
  launch.task_count = task_count;
  launch.first_task = first.const_data_ptr<int64_t>();
  launch.matrices = matrices;
  launch.inverse_amax = inverse.const_data_ptr<float>();
  launch.format_count = static_cast<int>(formats.size());
  launch.partial = partial.mutable_data_ptr<double>();
  launch.sums = sums.mutable_data_ptr<double>();
  launch.stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  const char* error = kernels::launch_block_sums(launch);
  TORCH_CHECK(error == nullptr, "precision readiness on the GPU: ", error);
  return sums;
}

#else

bool block_sums_kernel_built() { return false; }

bool block_sums_on_cuda(const at::Tensor&) { return false; }

at::Tensor block_sums_cuda(const at::Tensor&, const std::vector<int64_t>&, const at::Tensor&,
                           const std::vector<BlockFormatFactors>&) {
  TORCH_CHECK(false, "block_sums_cuda: this build has no CUDA kernels (no CUDA compiler was found)");
}

#endif

}  // namespace ampscope::profiler
