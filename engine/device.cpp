#include "engine/device.h"

#include <ATen/Context.h>
#include <ATen/Version.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "engine/bytes_text.h"
#include "engine/errors.h"

namespace ampscope::engine {
namespace {

int64_t cuda_device_count() {
  if (!at::hasCUDA()) return 0;
  return at::detail::getCUDAHooks().deviceCount();
}

c10::DeviceAllocator* cuda_allocator() { return at::getDeviceAllocator(c10::kCUDA); }

// Resident set and its peak from /proc/self/status (kB), the CPU's counterpart
// of the CUDA allocator counters.
std::pair<int64_t, int64_t> resident_set_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  int64_t rss = 0, hwm = 0;
  while (std::getline(status, line)) {
    std::istringstream fields(line);
    std::string key;
    int64_t kb = 0;
    fields >> key >> kb;
    if (key == "VmRSS:") rss = kb * 1024;
    if (key == "VmHWM:") hwm = kb * 1024;
  }
  return {rss, hwm};
}

}  // namespace

bool cuda_available() { return cuda_device_count() > 0; }

c10::Device resolve_device(DeviceChoice choice) {
  switch (choice) {
    case DeviceChoice::kCPU: return c10::Device(c10::kCPU);
    case DeviceChoice::kAuto: return cuda_available() ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
    case DeviceChoice::kCUDA:
      if (!at::hasCUDA())
        throw ConfigError("--device cuda: this LibTorch has no CUDA support or no CUDA driver was found; use --device cpu");
      if (cuda_device_count() == 0)
        throw ConfigError("--device cuda: no CUDA GPU is visible (check nvidia-smi and CUDA_VISIBLE_DEVICES); use --device cpu");
      return c10::Device(c10::kCUDA, 0);
  }
  return c10::Device(c10::kCPU);
}

std::string device_name(c10::Device device) { return device.str(); }

namespace {

// One of the mkldnn library's `() -> bool` queries; false when this LibTorch has no
// oneDNN (the op is then not registered), which is what ATen's matmul concludes too.
bool ask_mkldnn(const char* op) {
  const auto handle = c10::Dispatcher::singleton().findSchema({op, ""});
  if (!handle) return false;
  return handle->typed<bool()>().call();
}

}  // namespace

CpuMatmulPaths cpu_matmul_paths() {
  CpuMatmulPaths paths;
  paths.isa = at::get_cpu_capability();
  paths.onednn_bf16 = ask_mkldnn("mkldnn::_is_mkldnn_bf16_supported");
  paths.onednn_fp16 = ask_mkldnn("mkldnn::_is_mkldnn_fp16_supported");
  return paths;
}

MemorySample sample_memory(c10::Device device) {
  MemorySample sample;
  if (device.is_cuda()) {
    const auto stats = cuda_allocator()->getDeviceStats(device.index());
    const auto aggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    sample.allocated_bytes = stats.allocated_bytes[aggregate].current;
    sample.reserved_bytes = stats.reserved_bytes[aggregate].current;
    sample.peak_allocated_bytes = stats.allocated_bytes[aggregate].peak;
    return sample;
  }
  const auto [rss, hwm] = resident_set_bytes();
  sample.allocated_bytes = rss;
  sample.reserved_bytes = rss;
  sample.peak_allocated_bytes = hwm;
  return sample;
}

void reset_peak_memory(c10::Device device) {
  if (device.is_cuda()) {
    cuda_allocator()->resetPeakStats(device.index());
    return;
  }
  // Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0), so a
  // run's CPU peak is its own and not that of an earlier run in the process
  // (a comparison runs several). Where it is refused, the peak stays process-wide.
  std::ofstream clear_refs("/proc/self/clear_refs");
  if (clear_refs) clear_refs << "5";
}

int64_t available_host_memory_bytes() {
  int64_t available = -1;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  while (meminfo >> key >> kb) {
    if (key == "MemAvailable:") {
      available = kb * 1024;
      break;
    }
    meminfo.ignore(64, '\n');
  }
  // cgroup v2: memory.max is "max" when unlimited.
  std::ifstream max_file("/sys/fs/cgroup/memory.max"), current_file("/sys/fs/cgroup/memory.current");
  std::string max_text;
  int64_t current = 0;
  if (max_file >> max_text && max_text != "max" && current_file >> current) {
    const int64_t left = std::max<int64_t>(0, std::stoll(max_text) - current);
    available = available < 0 ? left : std::min(available, left);
  }
  return available;
}

std::string model_size_advice(ModelKind model) {
  switch (model) {
    case ModelKind::kGPT: return "lower --width, --layers or --seq-len";
    case ModelKind::kTorchScript: return "train a smaller TorchScript model or use --device cuda";
    case ModelKind::kMLP:
    case ModelKind::kConvNet: break;
  }
  return "lower --width or --layers";
}

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

bool is_allocation_failure(const std::string& what) {
  return what.find("DefaultCPUAllocator") != std::string::npos && what.find("allocate") != std::string::npos;
}

std::string requested_size(const std::string& what) {
  const std::string marker = "tried to allocate ";
  const auto at = what.find(marker);
  if (at == std::string::npos) return {};
  try {
    return fmt::format(" (one allocation of {})", bytes_text(std::stod(what.substr(at + marker.size()))));
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace ampscope::engine
