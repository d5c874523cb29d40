#pragma once
// The range statistics of a batched pass in one read of each element on a CUDA GPU:
// the twin of range_stats_cpu's loop (profiler/capture/range_stats_cpu.h, the same
// table), for the GPU, where the ATen ops of the same statistics were some 20 passes
// over the elements and two histograms of one global atomic add per element each
// (index_add_ of float64: 303 ms of an H200's time in one sample of a 12-layer GPT,
// issue 27). Here each thread block counts its chunk's histogram bins in shared
// memory and writes one row of partial statistics; a second kernel adds each
// member's rows in chunk order, so the result does not depend on scheduling.
//
// Plain C++ types only: this header is included by nvcc's and g++'s translation
// units alike (profiler/capture/range_stats_cuda.cpp holds the ATen side).
#include <cstdint>

namespace ampscope::profiler::cuda_kernels {

enum RangeSource : int64_t { kSourceFloat32 = 0, kSourceFloat64 = 1, kSourceBFloat16 = 2, kSourceFloat16 = 3 };

// The table's columns, as range_stats_cpu.h's RangeStatsColumn (checked where both are seen).
enum RangeColumn : int { kColumnZeros, kColumnNonfinite, kColumnMinNonzero, kColumnMaxAbs, kColumnSumSquares, kColumnPlaces };

// One thread block's elements [begin, end) of a member, at `data` (device memory).
// Laid out as kRangeTaskFields int64 values, so the launcher's tasks travel to the
// device as one int64 tensor.
struct RangeTask {
  int64_t data;    // the member's first element (a device pointer)
  int64_t begin, end;
  int64_t source;  // RangeSource
  int64_t member;  // the row of the table it adds to
};
inline constexpr int kRangeTaskFields = 5;
static_assert(sizeof(RangeTask) == kRangeTaskFields * sizeof(int64_t));

// Elements a thread block reads: enough per block to amortise its shared histogram,
// small enough that one large member still spreads over every SM.
inline constexpr int64_t kRangeChunkElements = int64_t{1} << 16;
// Bins held in shared memory: places (bounds + 1) and log2 bins together.
inline constexpr int kRangeMaxBins = 256;
inline constexpr int kRangeMaxBounds = 64;

struct RangeLaunch {
  const RangeTask* tasks;           // device, `task_count` of them, each member's in order
  int64_t task_count;
  const int64_t* first_task;        // device, members + 1: member m's tasks are [first_task[m], first_task[m + 1])
  int64_t members;
  bool compute_double;              // float64 arithmetic, else float32 (as range_stats_cpu's `compute`)
  const double* bounds;             // device, ascending, `bound_count` <= kRangeMaxBounds
  int bound_count;
  double magnitude_scale;
  int log2_min, log2_bins;          // places + log2_bins <= kRangeMaxBins
  int64_t columns;                  // kRangePlaces + bound_count + 1 + log2_bins
  double* partial;                  // device, [task_count, columns]
  double* table;                    // device, [members, columns]: the result
  void* stream;                     // cudaStream_t
};

// Launches both kernels on `stream`; nullptr, or the CUDA error's text.
const char* launch_range_stats(const RangeLaunch& launch);

}  // namespace ampscope::profiler::cuda_kernels
