#include "profiler/own_kernel_costs.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "profiler/session_meta_keys.h"

namespace ampscope::profiler {

std::string own_kernels_json(std::vector<OwnKernelCost> kernels, size_t top) {
  std::sort(kernels.begin(), kernels.end(), [](const OwnKernelCost& a, const OwnKernelCost& b) {
    return a.gpu_ns != b.gpu_ns ? a.gpu_ns > b.gpu_ns : a.name < b.name;
  });
  if (kernels.size() > top) kernels.resize(top);
  nlohmann::json out = nlohmann::json::array();
  for (const OwnKernelCost& k : kernels) out.push_back({{"name", k.name}, {"calls", k.calls}, {"gpu_ns", k.gpu_ns}});
  return out.dump();
}

std::vector<OwnKernelCost> own_kernels_from_meta(const std::map<std::string, std::string>& meta) {
  std::vector<OwnKernelCost> out;
  const auto it = meta.find(meta_key::kProfilerOwnKernelNames);
  if (it == meta.end()) return out;
  const nlohmann::json parsed = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return out;
  for (const auto& o : parsed) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) continue;
    const auto number = [&](const char* field) {
      return o.contains(field) && o[field].is_number_integer() ? o[field].get<int64_t>() : 0;
    };
    out.push_back({o["name"].get<std::string>(), number("calls"), number("gpu_ns")});
  }
  return out;
}

}  // namespace ampscope::profiler
