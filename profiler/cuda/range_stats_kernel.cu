#include "profiler/cuda/range_stats_kernel.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace ampscope::profiler::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// A member's element widened as range_stats_cpu widens it (bf16 and fp16 through
// float32, exactly; float64 to float32 rounded to nearest).
template <typename Compute>
__device__ Compute load(const RangeTask& task, int64_t i) {
  switch (task.source) {
    case kSourceFloat32: return static_cast<Compute>(reinterpret_cast<const float*>(task.data)[i]);
    case kSourceFloat64: return static_cast<Compute>(reinterpret_cast<const double*>(task.data)[i]);
    case kSourceBFloat16: {
      const uint32_t bits = reinterpret_cast<const uint16_t*>(task.data)[i];
      return static_cast<Compute>(__uint_as_float(bits << 16));
    }
    default: return static_cast<Compute>(__half2float(__ushort_as_half(reinterpret_cast<const unsigned short*>(task.data)[i])));
  }
}

__device__ float magnitude(float v) { return fabsf(v); }
__device__ double magnitude(double v) { return fabs(v); }

// floor(log2 a) for a finite a > 0, exactly (frexp: a = m * 2^e, m in [0.5, 1)).
__device__ int floor_log2(double a) {
  int e = 0;
  frexp(a, &e);
  return e - 1;
}

template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
template <typename T>
__device__ T warp_min(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v = min(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}
template <typename T>
__device__ T warp_max(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v = max(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// One block per task: its elements' statistics into one row of `partial`.
template <typename Compute>
__global__ void __launch_bounds__(kThreads) chunk_kernel(RangeLaunch launch) {
  __shared__ unsigned int bins[kRangeMaxBins];
  __shared__ Compute bounds[kRangeMaxBounds];
  __shared__ double warp_sums[3][kWarps];
  __shared__ Compute warp_extremes[2][kWarps];
  const int places = launch.bound_count + 1;
  const int bin_count = places + launch.log2_bins;
  for (int b = threadIdx.x; b < bin_count; b += blockDim.x) bins[b] = 0;
  for (int b = threadIdx.x; b < launch.bound_count; b += blockDim.x) bounds[b] = static_cast<Compute>(launch.bounds[b]);
  __syncthreads();

  const RangeTask task = launch.tasks[blockIdx.x];
  const Compute scale = static_cast<Compute>(launch.magnitude_scale);
  const int log2_max = launch.log2_min + launch.log2_bins - 1;
  unsigned int zeros = 0, nonfinite = 0;
  double sum_squares = 0;
  Compute min_nonzero = INFINITY, max_abs = 0;
  for (int64_t i = task.begin + threadIdx.x; i < task.end; i += blockDim.x) {
    const Compute v = load<Compute>(task, i);
    if (!isfinite(v)) {
      ++nonfinite;
      continue;
    }
    const Compute a = magnitude(v);
    sum_squares += static_cast<double>(v) * static_cast<double>(v);
    max_abs = max(max_abs, a);
    if (a == 0) {
      ++zeros;
      continue;
    }
    min_nonzero = min(min_nonzero, a);
    const Compute m = a * scale;
    int place = 0;
    while (place < launch.bound_count && m >= bounds[place]) ++place;
    atomicAdd(&bins[place], 1u);
    if (launch.log2_bins > 0) {
      const int e = min(max(floor_log2(static_cast<double>(a)), launch.log2_min), log2_max);
      atomicAdd(&bins[places + e - launch.log2_min], 1u);
    }
  }

  // Counts below 2^32: a block reads kRangeChunkElements.
  const double z = warp_sum(static_cast<double>(zeros)), n = warp_sum(static_cast<double>(nonfinite));
  const double s = warp_sum(sum_squares);
  const Compute lo = warp_min(min_nonzero), hi = warp_max(max_abs);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_sums[0][warp] = z;
    warp_sums[1][warp] = n;
    warp_sums[2][warp] = s;
    warp_extremes[0][warp] = lo;
    warp_extremes[1][warp] = hi;
  }
  __syncthreads();
  double* row = launch.partial + blockIdx.x * launch.columns;
  if (threadIdx.x == 0) {
    double sums[3] = {0, 0, 0};
    Compute low = INFINITY, high = 0;
    for (int w = 0; w < kWarps; ++w) {
      for (int k = 0; k < 3; ++k) sums[k] += warp_sums[k][w];
      low = min(low, warp_extremes[0][w]);
      high = max(high, warp_extremes[1][w]);
    }
    row[kColumnZeros] = sums[0];
    row[kColumnNonfinite] = sums[1];
    row[kColumnSumSquares] = sums[2];
    row[kColumnMinNonzero] = static_cast<double>(low);
    row[kColumnMaxAbs] = static_cast<double>(high);
  }
  for (int b = threadIdx.x; b < bin_count; b += blockDim.x) row[kColumnPlaces + b] = bins[b];
}

// One block per member: its tasks' rows combined in task order (as range_stats_cpu
// combines its chunks), one thread per column.
__global__ void __launch_bounds__(kThreads) combine_kernel(RangeLaunch launch) {
  const int64_t member = blockIdx.x;
  const int64_t first = launch.first_task[member], last = launch.first_task[member + 1];
  for (int64_t c = threadIdx.x; c < launch.columns; c += blockDim.x) {
    const bool lowest = c == kColumnMinNonzero, highest = c == kColumnMaxAbs;
    double value = lowest ? INFINITY : 0.0;
    for (int64_t t = first; t < last; ++t) {
      const double v = launch.partial[t * launch.columns + c];
      value = lowest ? fmin(value, v) : highest ? fmax(value, v) : value + v;
    }
    launch.table[member * launch.columns + c] = value;
  }
}

}  // namespace

const char* launch_range_stats(const RangeLaunch& launch) {
  if (launch.bound_count > kRangeMaxBounds || launch.bound_count + 1 + launch.log2_bins > kRangeMaxBins)
    return "too many bins for the range statistics kernel";
  if (launch.members == 0) return nullptr;
  const auto stream = static_cast<cudaStream_t>(launch.stream);
  if (launch.task_count > 0) {
    if (launch.compute_double) chunk_kernel<double><<<static_cast<unsigned>(launch.task_count), kThreads, 0, stream>>>(launch);
    else chunk_kernel<float><<<static_cast<unsigned>(launch.task_count), kThreads, 0, stream>>>(launch);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cudaGetErrorString(e);
  }
  combine_kernel<<<static_cast<unsigned>(launch.members), kThreads, 0, stream>>>(launch);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return cudaGetErrorString(e);
  return nullptr;
}

}  // namespace ampscope::profiler::cuda_kernels
