#pragma once
// Peak FLOP/s of NVIDIA GPUs by precision, from the human-edited table
// resources/gpu_peaks.txt (its header documents the format), so that achieved
// FLOP/s can be put against what the hardware could do (MFU).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ampscope::profiler {

struct GpuPeak {
  std::string name;  // "NVIDIA H100 SXM"
  // Dense FLOP/s (no sparsity), Tensor Core where applicable; 0 = not supported.
  double fp32 = 0, tf32 = 0, fp16 = 0, bf16 = 0;
  std::string source;  // where the figures come from ("NVIDIA H100 datasheet")
  // Substrings of CUDA device names this entry is for ("H100 PCIe"), matched as whole tokens.
  std::vector<std::string> patterns;
};

// The entry for a device name as CUDA reports it ("NVIDIA H100 80GB HBM3",
// "Tesla V100-SXM2-16GB"), from resource_path("gpu_peaks.txt") (profiler/resource_files.h) or the
// file named by the AMPSCOPE_GPU_PEAKS environment variable, read once.
// std::nullopt for an unknown device or a CPU. Throws std::runtime_error when
// the table cannot be read or has a bad line.
std::optional<GpuPeak> find_gpu_peak(std::string_view device_name);
// The table find_gpu_peak reads: AMPSCOPE_GPU_PEAKS, else resource_path("gpu_peaks.txt").
std::string gpu_peaks_path();

// Parses the table's text (figures in the text are TFLOPS; the result is FLOP/s).
// Throws std::runtime_error "gpu_peaks.txt line N: ..." on a bad line.
std::vector<GpuPeak> parse_gpu_peaks(std::string_view text);

// The entry of `table` whose longest pattern occurs in `device_name` as a whole
// token (case-insensitive; no letter or digit on either side); the earlier
// entry wins a tie. What find_gpu_peak does with the loaded table.
std::optional<GpuPeak> match_gpu_peak(const std::vector<GpuPeak>& table,
                                      std::string_view device_name);

// variant is "fp32" | "tf32" | "fp16" | "bf16"; 0 when unknown or unsupported.
double peak_for_variant(const GpuPeak& peak, std::string_view variant);

}  // namespace ampscope::profiler
