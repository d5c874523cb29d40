#include "profiler/capture/session_meta.h"

#include <fmt/format.h>
#include <torch/headeronly/version.h>

#include <ctime>
#include <fstream>

#include "engine/config_json.h"
#include "engine/device.h"

#if defined(AMPSCOPE_HAVE_CUPTI)
#include <cuda_runtime_api.h>
#endif

namespace ampscope::profiler {
namespace {

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return {};
}

}  // namespace

std::string device_model_name(const std::string& device) {
  if (device.rfind("cuda", 0) == 0) {
#if defined(AMPSCOPE_HAVE_CUPTI)
    int index = 0;
    if (const auto colon = device.find(':'); colon != std::string::npos) {
      try {
        index = std::stoi(device.substr(colon + 1));
      } catch (const std::exception&) {
        return device;
      }
    }
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) == cudaSuccess) return properties.name;
#endif
    return device;
  }
  const std::string name = cpu_model_name();
  return name.empty() ? device : name;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

SessionMeta make_session_meta(const engine::RunStartedEvent& run) {
  SessionMeta meta;
  meta.ampscope_version = "0.1.0";
  meta.created_utc = utc_now_iso8601();
  meta.config_json = engine::to_json(run.config).dump();
  meta.device = run.device;
  meta.device_name = device_model_name(run.device);
  if (run.device == "cpu") {
    const auto paths = engine::cpu_matmul_paths();
    meta.cpu_isa = paths.isa;
    meta.cpu_bf16_matmul = paths.onednn_bf16 ? kCpuMatmulOneDnn : kCpuMatmulFallback;
    meta.cpu_fp16_matmul = paths.onednn_fp16 ? kCpuMatmulOneDnn : kCpuMatmulFallback;
  }
  meta.model = run.model;
  meta.data = run.data;
  meta.precision = std::string(engine::to_string(run.config.precision));
  meta.parameter_count = run.parameter_count;
  meta.scaler_enabled = run.scaler_enabled;
  meta.torch_version = fmt::format("{}.{}.{}", TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, TORCH_VERSION_PATCH);
  return meta;
}

}  // namespace ampscope::profiler
