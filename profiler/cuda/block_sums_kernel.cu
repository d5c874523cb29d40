#include "profiler/cuda/block_sums_kernel.h"

#include <cuda_runtime.h>

namespace ampscope::profiler::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxColumns = block_sum_columns(kBlockSumsMaxFormats);

__device__ double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// One block per task: its elements' sums into one row of `partial`. Each thread
// keeps its own counts and double sums; warps and then the block add them in a
// fixed order, so a task's row is the same on every run.
__global__ void __launch_bounds__(kThreads) task_kernel(BlockSumsLaunch launch) {
  __shared__ double warp_totals[kMaxColumns][kWarps];
  const BlockSumsTask task = launch.tasks[blockIdx.x];
  const float inverse_amax = launch.inverse_amax[task.matrix];
  const int formats = launch.format_count;
  unsigned int nonzero = 0;
  double signal = 0;
  unsigned int saturated[kBlockSumsMaxFormats] = {};
  unsigned int dequantized_nonzero[kBlockSumsMaxFormats] = {};
  double noise[kBlockSumsMaxFormats] = {};
  const int64_t first = task.begin * kBlockSumsBlock, last = task.end * kBlockSumsBlock;
  for (int64_t i = first + threadIdx.x; i < last; i += kThreads) {
    const float x = launch.magnitudes[i];
    nonzero += x != 0.0f;
    const float scaled = x * inverse_amax;
    signal += static_cast<double>(scaled * scaled);
#pragma unroll
    for (int f = 0; f < kBlockSumsMaxFormats; ++f) {
      if (f >= formats) break;
      const BlockSumsFormat& format = launch.formats[f];
      const int64_t group = format.groups_of_16 ? i / 16 : i / kBlockSumsBlock;
      const ElementSums e =
          quantize_element(x, format.quantize[group], format.dequantize[group], inverse_amax, format.element);
      saturated[f] += e.saturated;
      dequantized_nonzero[f] += e.dequantized_nonzero;
      noise[f] += static_cast<double>(e.error * e.error);
    }
  }

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const auto keep = [&](int column, double value) {
    value = warp_sum(value);
    if (lane == 0) warp_totals[column][warp] = value;
  };
  keep(0, nonzero);
  keep(1, signal);
  for (int f = 0; f < formats; ++f) {
    keep(2 + 3 * f, saturated[f]);
    keep(3 + 3 * f, dequantized_nonzero[f]);
    keep(4 + 3 * f, noise[f]);
  }
  __syncthreads();
  const int columns = block_sum_columns(formats);
  for (int c = threadIdx.x; c < columns; c += kThreads) {
    double total = 0;
    for (int w = 0; w < kWarps; ++w) total += warp_totals[c][w];
    launch.partial[blockIdx.x * columns + c] = total;
  }
}

// One block per matrix: its tasks' rows added in task order, one thread per column.
__global__ void __launch_bounds__(kThreads) combine_kernel(BlockSumsLaunch launch) {
  const int64_t matrix = blockIdx.x;
  const int64_t first = launch.first_task[matrix], last = launch.first_task[matrix + 1];
  const int columns = block_sum_columns(launch.format_count);
  for (int c = threadIdx.x; c < columns; c += kThreads) {
    double total = 0;
    for (int64_t t = first; t < last; ++t) total += launch.partial[t * columns + c];
    launch.sums[matrix * columns + c] = total;
  }
}

}  // namespace

const char* launch_block_sums(const BlockSumsLaunch& launch) {
  if (launch.format_count < 0 || launch.format_count > kBlockSumsMaxFormats)
    return "too many formats for the readiness kernel";
  if (launch.matrices == 0) return nullptr;
  const auto stream = static_cast<cudaStream_t>(launch.stream);
  if (launch.task_count > 0) {
    task_kernel<<<static_cast<unsigned>(launch.task_count), kThreads, 0, stream>>>(launch);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cudaGetErrorString(e);
  }
  combine_kernel<<<static_cast<unsigned>(launch.matrices), kThreads, 0, stream>>>(launch);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cudaGetErrorString(e);
  return nullptr;
}

}  // namespace ampscope::profiler::cuda_kernels
