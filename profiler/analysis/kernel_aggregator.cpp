#include "profiler/analysis/kernel_aggregator.h"

#include <algorithm>

namespace ampscope::profiler {

void KernelAggregator::add(const KernelRecord& k, const std::string& launching_op) {
  const int64_t duration = k.end_ns - k.start_ns;
  KernelSummary& s = rows_[k.name];
  if (s.calls == 0) {
    s.name = k.name;
    s.kind = k.kind;
    s.min_ns = duration;
    s.max_ns = duration;
    s.grid = k.grid;
    s.block = k.block;
  }
  ++s.calls;
  s.total_ns += duration;
  s.min_ns = std::min(s.min_ns, duration);
  s.max_ns = std::max(s.max_ns, duration);
  s.tensor_core_calls += k.tensor_core_by_name ? 1 : 0;
  s.tensor_core = s.tensor_core_calls > 0;
  total_ns_ += duration;
  if (!launching_op.empty()) ++launchers_[k.name][launching_op];
}

std::vector<KernelSummary> KernelAggregator::summaries() const {
  std::vector<KernelSummary> out;
  out.reserve(rows_.size());
  for (const auto& [name, row] : rows_) {
    KernelSummary s = row;
    s.mean_ns = s.calls > 0 ? s.total_ns / s.calls : 0;
    if (const auto it = launchers_.find(name); it != launchers_.end()) {
      std::vector<std::pair<std::string, int64_t>> ops(it->second.begin(), it->second.end());
      std::stable_sort(ops.begin(), ops.end(),
                       [](const auto& a, const auto& b) { return a.second > b.second; });
      for (size_t i = 0; i < ops.size() && i < kMaxLaunchingOps; ++i)
        s.launching_ops.push_back(ops[i].first);
    }
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const KernelSummary& a, const KernelSummary& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

}  // namespace ampscope::profiler
