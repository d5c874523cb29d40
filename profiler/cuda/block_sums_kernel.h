#pragma once
// Precision readiness's per-matrix sums of a pass on a CUDA GPU, in one read of each
// element for every format: the twin of block_sums_cpu
// (profiler/capture/quantization_block_sums_cpu.h, the same columns), for the GPU,
// where the same sums as ATen ops were over 1,800 launches and 150 ms of an H200's
// time in one sample of a 12-layer GPT (issue 27). Each thread block sums a run of
// one matrix's 32-blocks into one row of partial sums; a second kernel adds each
// matrix's rows in order, so the result does not depend on scheduling.
//
// Plain C++ types only: included by nvcc's and g++'s translation units alike
// (profiler/capture/quantization_block_sums_cuda.cpp holds the ATen side).
#include <cstdint>

#include "profiler/cuda/quantization_element_math.h"

namespace ampscope::profiler::cuda_kernels {

inline constexpr int kBlockSumsMaxFormats = 8;
// 32-blocks a thread block reads: 64k elements, as the range statistics' chunks.
inline constexpr int64_t kBlockSumsBlocksPerTask = 2048;

struct BlockSumsFormat {
  const float* quantize;    // device, per scaling group
  const float* dequantize;  // device, per scaling group
  bool groups_of_16;        // a group is a 16-block (NVFP4), else a 32-block
  ElementFormat element;
};

// One thread block's 32-blocks [begin, end) of one matrix, as int64 triples so the
// launcher's tasks travel to the device as one int64 tensor.
struct BlockSumsTask {
  int64_t matrix, begin, end;
};
inline constexpr int kBlockSumsTaskFields = 3;
static_assert(sizeof(BlockSumsTask) == kBlockSumsTaskFields * sizeof(int64_t));

struct BlockSumsLaunch {
  const float* magnitudes;         // device, [blocks, 32]: |x|, finite
  const BlockSumsTask* tasks;      // device, each matrix's in order
  int64_t task_count;
  const int64_t* first_task;       // device, matrices + 1: matrix m's tasks are [first_task[m], first_task[m + 1])
  int64_t matrices;
  const float* inverse_amax;       // device, per matrix
  BlockSumsFormat formats[kBlockSumsMaxFormats];
  int format_count;
  double* partial;                 // device, [task_count, block_sum_columns(format_count)]
  double* sums;                    // device, [matrices, block_sum_columns(format_count)]: the result
  void* stream;                    // cudaStream_t
};

// Launches both kernels on `stream`; nullptr, or the CUDA error's text.
const char* launch_block_sums(const BlockSumsLaunch& launch);

}  // namespace ampscope::profiler::cuda_kernels
