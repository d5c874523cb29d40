#pragma once
// The profiler's own GPU work by kernel name (the range statistics' kernels a traced
// step caught), as the session keeps it in meta_key::kProfilerOwnKernelNames: what a
// sample costs on the GPU, and where. Written by the Profiler, read by SessionView.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ampscope::profiler {

struct OwnKernelCost {
  std::string name;
  int64_t calls = 0;
  int64_t gpu_ns = 0;
};

// The meta value: the `top` costliest by GPU time, costliest first (a JSON array of
// {name, calls, gpu_ns}).
std::string own_kernels_json(std::vector<OwnKernelCost> kernels, size_t top);
// Back from the session's meta; absent or unreadable reads as none.
std::vector<OwnKernelCost> own_kernels_from_meta(const std::map<std::string, std::string>& meta);

}  // namespace ampscope::profiler
