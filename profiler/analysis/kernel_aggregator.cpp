#include "profiler/analysis/kernel_aggregator.h"

#include <algorithm>

namespace ampscope::profiler {

void KernelAggregator::add(const KernelRecord& k, const std::string& launching_op,
                           const std::vector<std::string>& enclosing_ops) {
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
  ++calls_;
  longest_ns_ = std::max(longest_ns_, duration);
  if (!launching_op.empty()) ++launchers_[k.name][launching_op];
  // Once per kernel call for each distinct op around it (recursion names one op twice).
  for (size_t i = 0; i < enclosing_ops.size(); ++i)
    if (std::find(enclosing_ops.begin(), enclosing_ops.begin() + static_cast<std::ptrdiff_t>(i), enclosing_ops[i]) ==
        enclosing_ops.begin() + static_cast<std::ptrdiff_t>(i))
      ++enclosing_[k.name][enclosing_ops[i]];
}

std::vector<std::string> KernelAggregator::most_calls_first(const OpCalls& calls, const std::string& kernel) {
  std::vector<std::string> names;
  const auto it = calls.find(kernel);
  if (it == calls.end()) return names;
  std::vector<std::pair<std::string, int64_t>> ops(it->second.begin(), it->second.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < ops.size() && i < kMaxLaunchingOps; ++i) names.push_back(ops[i].first);
  return names;
}

std::vector<KernelSummary> KernelAggregator::summaries() const {
  std::vector<KernelSummary> out;
  out.reserve(rows_.size());
  for (const auto& [name, row] : rows_) {
    KernelSummary s = row;
    s.mean_ns = s.calls > 0 ? s.total_ns / s.calls : 0;
    s.launching_ops = most_calls_first(launchers_, name);
    s.enclosing_ops = most_calls_first(enclosing_, name);
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const KernelSummary& a, const KernelSummary& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return out;
}

}  // namespace ampscope::profiler
