#pragma once
// Choosing the training device and reading its memory use.
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "engine/config.h"

namespace ampscope::engine {

// auto -> the first CUDA device if one is usable, else the CPU.
// Throws ConfigError for cuda when no CUDA device (or no CUDA build of LibTorch) is there.
c10::Device resolve_device(DeviceChoice choice);
bool cuda_available();
std::string device_name(c10::Device device);  // "cpu", "cuda:0"

// How PyTorch multiplies bf16 and fp16 matrices on this CPU, asked of PyTorch itself
// (mkldnn::_is_mkldnn_bf16_supported / _fp16_, the checks ATen's matmul makes): with
// oneDNN's kernels, or, where the CPU lacks the instructions oneDNN needs (AVX-512
// or AMX for bf16; AVX512-FP16, AMX-FP16 or AVX-NE-CONVERT for fp16), with ATen's
// fallback loops, an order of magnitude slower than fp32. A verdict that says why
// bf16 was slow on a CPU rests on this, not on a guess from the CPU's name.
struct CpuMatmulPaths {
  std::string isa;           // ATen's vector ISA: "AVX2", "AVX512", "DEFAULT", ...
  bool onednn_bf16 = false;  // bf16 matmuls go to oneDNN
  bool onednn_fp16 = false;  // fp16 matmuls go to oneDNN
};
CpuMatmulPaths cpu_matmul_paths();

struct MemorySample {
  int64_t allocated_bytes = 0;       // CUDA: live tensors in the caching allocator; CPU: resident set
  int64_t reserved_bytes = 0;        // CUDA: held by the caching allocator; CPU: same as allocated
  int64_t peak_allocated_bytes = 0;  // CUDA: peak since the run started; CPU: peak resident set
};

// Cheap on both devices: allocator counters on CUDA (no sync), /proc on the CPU.
MemorySample sample_memory(c10::Device device);
void reset_peak_memory(c10::Device device);

// Host memory this process can still take before the kernel's OOM killer ends it: the
// smaller of /proc/meminfo's MemAvailable and what the cgroup (container) limit leaves.
// -1 where neither can be read.
int64_t available_host_memory_bytes();

// What to lower when a model does not fit in memory, for a message.
std::string model_size_advice(ModelKind model);

// First line of a c10::Error, without LibTorch's C++ backtrace.
std::string first_line(const std::string& text);
// LibTorch's CPU allocator reports a failed allocation as a plain c10::Error
// ("DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes").
bool is_allocation_failure(const std::string& what);
// " (one allocation of 4.0 TB)", from the allocator's message; empty if it names no size.
std::string requested_size(const std::string& what);

}  // namespace ampscope::engine
