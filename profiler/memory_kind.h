#pragma once
// What a step's memory figures (StepRecord::mem_*) measure, by the device the run trained
// on: CUDA's caching allocator (bytes held by live tensors, bytes it reserved, the peak of
// the first), or on the CPU the process's resident set (in both mem_allocated_bytes and
// mem_reserved_bytes) and its peak (VmHWM), interpreter and libraries included. The GUI's
// memory plot, the report and TensorBoard's tags name them by this.
#include <string_view>

namespace ampscope::profiler {

enum class MemoryKind { kCudaAllocator, kResidentSet };

// "cpu" -> the resident set; "cuda:0" and sessions that name no device -> the allocator's counters.
inline MemoryKind memory_kind(std::string_view device) {
  return device.starts_with("cpu") ? MemoryKind::kResidentSet : MemoryKind::kCudaAllocator;
}

// The name of a run's memory peak in the report (a session's figures, a comparison's column).
inline std::string_view peak_memory_name(MemoryKind kind) {
  return kind == MemoryKind::kResidentSet ? "peak resident set" : "peak memory";
}

}  // namespace ampscope::profiler
