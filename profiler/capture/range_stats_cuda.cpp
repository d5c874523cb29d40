#include "profiler/capture/range_stats_cuda.h"

#include <ATen/ATen.h>

#include <algorithm>

#include "profiler/capture/range_stats_cpu.h"

#if AMPSCOPE_HAVE_CUDA_KERNELS
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "profiler/cuda/range_stats_kernel.h"
#endif

namespace ampscope::profiler {

#if AMPSCOPE_HAVE_CUDA_KERNELS
namespace kernels = cuda_kernels;
constexpr bool same_column(RangeStatsColumn a, kernels::RangeColumn b) { return static_cast<int>(a) == static_cast<int>(b); }
static_assert(same_column(kRangeZeros, kernels::kColumnZeros) && same_column(kRangeNonfinite, kernels::kColumnNonfinite) &&
              same_column(kRangeMinNonzero, kernels::kColumnMinNonzero) &&
              same_column(kRangeMaxAbs, kernels::kColumnMaxAbs) &&
              same_column(kRangeSumSquares, kernels::kColumnSumSquares) &&
              same_column(kRangePlaces, kernels::kColumnPlaces));

namespace {

int64_t source_of(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return kernels::kSourceFloat32;
    case at::kDouble: return kernels::kSourceFloat64;
    case at::kBFloat16: return kernels::kSourceBFloat16;
    default: return kernels::kSourceFloat16;
  }
}

}  // namespace

bool range_stats_kernel_built() { return true; }

bool range_stats_on_cuda(const std::vector<PassMember>& members) {
  if (members.empty() || !members.front().flat.is_cuda()) return false;
  const at::Device device = members.front().flat.device();
  return std::all_of(members.begin(), members.end(), [&](const PassMember& m) {
    return m.flat.device() == device && m.flat.is_contiguous() && widened_on_the_cpu(m.flat.scalar_type());
  });
}

at::Tensor range_stats_cuda(const std::vector<PassMember>& members, at::ScalarType compute, double magnitude_scale,
                            const std::vector<double>& bounds, int log2_min, int log2_bins) {
  TORCH_CHECK(range_stats_on_cuda(members), "range_stats_cuda: contiguous CUDA members of float32, float64, bf16 or fp16");
  TORCH_CHECK(compute == at::kFloat || compute == at::kDouble, "range_stats_cuda: float32 or float64");
  const at::Device device = members.front().flat.device();
  const c10::cuda::CUDAGuard guard(device);
  std::vector<int64_t> tasks, first_task{0};
  for (size_t m = 0; m < members.size(); ++m) {
    const at::Tensor& flat = members[m].flat;
    const int64_t n = flat.numel();
    for (int64_t b = 0; b < n; b += kernels::kRangeChunkElements)
      tasks.insert(tasks.end(), {reinterpret_cast<int64_t>(flat.const_data_ptr()), b,
                                 std::min(n, b + kernels::kRangeChunkElements), source_of(flat.scalar_type()),
                                 static_cast<int64_t>(m)});
    first_task.push_back(static_cast<int64_t>(tasks.size()) / kernels::kRangeTaskFields);
  }
  const int64_t task_count = first_task.back();
  const int64_t columns = kRangePlaces + static_cast<int64_t>(bounds.size()) + 1 + log2_bins;
  const at::TensorOptions doubles = at::TensorOptions().dtype(at::kDouble).device(device);
  // Kept alive until the launch returns; the caching allocator orders their reuse after the kernels.
  const at::Tensor task_table = host_values_on(tasks.empty() ? std::vector<int64_t>{0} : tasks, device);
  const at::Tensor first = host_values_on(first_task, device);
  const at::Tensor bound_values = host_values_on(bounds.empty() ? std::vector<double>{0.0} : bounds, at::kDouble, device);
  const at::Tensor partial = at::empty({std::max<int64_t>(task_count, 1), columns}, doubles);
  at::Tensor table = at::empty({static_cast<int64_t>(members.size()), columns}, doubles);
  kernels::RangeLaunch launch{};
  launch.tasks = reinterpret_cast<const kernels::RangeTask*>(task_table.const_data_ptr<int64_t>());
  launch.task_count = task_count;
  launch.first_task = first.const_data_ptr<int64_t>();
  launch.members = static_cast<int64_t>(members.size());
  launch.compute_double = compute == at::kDouble;
  launch.bounds = bound_values.const_data_ptr<double>();
  launch.bound_count = static_cast<int>(bounds.size());
  launch.magnitude_scale = magnitude_scale;
  launch.log2_min = log2_min;
  launch.log2_bins = log2_bins;
  launch.columns = columns;
  launch.partial = partial.mutable_data_ptr<double>();
  launch.table = table.mutable_data_ptr<double>();
  launch.stream = c10::cuda::getCurrentCUDAStream(device.index()).stream();
  const char* error = kernels::launch_range_stats(launch);
  TORCH_CHECK(error == nullptr, "range statistics on the GPU: ", error);
  return table;
}

#else

bool range_stats_kernel_built() { return false; }

bool range_stats_on_cuda(const std::vector<PassMember>&) { return false; }

at::Tensor range_stats_cuda(const std::vector<PassMember>&, at::ScalarType, double, const std::vector<double>&, int,
                            int) {
  TORCH_CHECK(false, "range_stats_cuda: this build has no CUDA kernels (no CUDA compiler was found)");
}

#endif

at::Tensor range_stats_one_read(const std::vector<PassMember>& members, at::ScalarType compute, double magnitude_scale,
                                const std::vector<double>& bounds, int log2_min, int log2_bins) {
  if (range_stats_on_cpu(members)) return range_stats_cpu(members, compute, magnitude_scale, bounds, log2_min, log2_bins);
  if (range_stats_on_cuda(members)) return range_stats_cuda(members, compute, magnitude_scale, bounds, log2_min, log2_bins);
  return {};
}

}  // namespace ampscope::profiler
