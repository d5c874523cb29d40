#include "profiler/analysis/compiled_kernels_text.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "profiler/number_text.h"

namespace ampscope::profiler {

std::string fused_ops_text(const CompiledKernelRow& row) {
  // (module, category) -> (op, count), in order of first appearance within a group.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<std::string, int>>> groups;
  for (const CompiledFusedOp& op : row.ops) {
    std::string name = op.name.empty() ? op.node + " (inductor's)" : op.name;
    if (const auto colons = name.find("::"); colons != std::string::npos) name = name.substr(colons + 2);
    auto& names = groups[{op.module.empty() ? "-" : op.module, op.category}];
    auto it = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
    if (it == names.end()) names.emplace_back(std::move(name), 1);
    else ++it->second;
  }
  std::string out;
  for (const auto& [key, names] : groups) {
    if (!out.empty()) out += "; ";
    out += key.second.empty() ? key.first + ":" : key.first + " " + key.second + ":";
    for (size_t i = 0; i < names.size(); ++i) {
      out += (i ? ", " : " ") + names[i].first;
      if (names[i].second > 1) out += " x" + std::to_string(names[i].second);
    }
  }
  return out;
}

std::string compiled_call_text(const CompiledKernelRow& row) {
  if (row.kernel.starts_with("graph_") || row.ordinal == 0) return row.kernel;
  return row.kernel + " #" + std::to_string(row.ordinal + 1);
}

std::string compiled_share_text(const CompiledTimeShare& share) {
  const double graph = static_cast<double>(std::max<int64_t>(share.graph_ns, 1));
  // Tuning is said only where there was some (Triton's autotuner, a GPU's first calls).
  const auto tuning = [](int64_t ns, double of) {
    return ns > 0 ? ", " + text::percent(static_cast<double>(ns) / of) + " in inductor tuning them in first calls" : "";
  };
  std::string out =
      text::percent(share.kernel_share()) + " in the kernels below" + tuning(share.tuning_ns, graph) + ", " +
      text::percent(static_cast<double>(share.other_ns) / graph) + " in other recorded ops, " +
      text::percent(static_cast<double>(share.graph_ns - share.kernel_ns - share.tuning_ns - share.other_ns) / graph) +
      " in the generated wrapper itself";
  if (share.gpu_graph_ns > 0) {
    const double gpu = static_cast<double>(share.gpu_graph_ns);
    out += "; on the GPU, " + text::percent(share.gpu_kernel_share()) + " in the kernels below" +
           tuning(share.gpu_tuning_ns, gpu) + " and " + text::percent(static_cast<double>(share.gpu_other_ns) / gpu) +
           " in kernels inductor did not list";
    // A first call tunes kernels (the tuning above) and warms CUDA graphs up: it says
    // little of the calls that train.
    if (share.has_later_calls() && share.gpu_graph_first_ns > 0)
      out += "; after each graph's first call, " + text::percent(share.gpu_kernel_share_after_first_calls()) +
             " in the kernels below (the first calls took " +
             text::percent(static_cast<double>(share.gpu_graph_first_ns) / gpu) +
             " of the GPU time: a graph's first run tunes its kernels and warms CUDA graphs up)";
  }
  return out;
}

}  // namespace ampscope::profiler
