#pragma once
// Where ampscope reads the data files of resources/ (the Tensor Core kernel
// rules, the GPU peak table). An installed tree (`cmake --install`) keeps them in
// <prefix>/share/ampscope beside <prefix>/bin; they are found from the running
// program's own path, so a moved or copied tree keeps working. A program that
// has no such directory beside it (one in the build tree) reads the source
// tree's resources/. The per-file environment overrides
// (AMPSCOPE_TENSOR_CORE_RULES, AMPSCOPE_GPU_PEAKS) come before both.
#include <string>
#include <string_view>

namespace ampscope::profiler {

// The directory, decided once per process.
const std::string& resource_dir();
// resource_dir() + "/" + name.
std::string resource_path(std::string_view name);

}  // namespace ampscope::profiler
