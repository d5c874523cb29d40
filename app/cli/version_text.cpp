#include "app/cli/version_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <sstream>

#include "profiler/analysis/gpu_peaks.h"
#include "profiler/capture/own_cuda_kernels.h"
#include "profiler/cupti/tensor_core_rules.h"
#include "profiler/resource_files.h"

namespace ampscope::cli {

std::string version_text() {
  std::string text = "ampscope 0.1.0\n";
  const std::vector<std::string_view> kernels = profiler::own_cuda_kernels();
  text += fmt::format("own CUDA kernels: {}\n",
                      kernels.empty() ? "none (built without a CUDA compiler: ATen ops do their work on a GPU)"
                                      : fmt::format("{}", fmt::join(kernels, ", ")));
  text += "resources " + profiler::resource_dir() + "\n";
  const std::string rules_path = profiler::cupti::TensorCoreRules::default_path();
  try {
    const auto rules = profiler::cupti::TensorCoreRules::load(rules_path);
    text += fmt::format("  {}: {} Tensor Core kernel rules\n", rules_path, rules->rules().size());
  } catch (const std::exception& e) {
    text += fmt::format("  {}: cannot be used: {}\n", rules_path, e.what());
  }
  const std::string peaks_path = profiler::gpu_peaks_path();
  try {
    std::ifstream in(peaks_path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open it");
    std::ostringstream content;
    content << in.rdbuf();
    text += fmt::format("  {}: peak figures of {} GPUs", peaks_path, profiler::parse_gpu_peaks(content.str()).size());
  } catch (const std::exception& e) {
    text += fmt::format("  {}: cannot be used: {}", peaks_path, e.what());
  }
  return text;
}

}  // namespace ampscope::cli
