#include "profiler/analysis/compiled_kernels.h"

#include <charconv>
#include <set>
#include <unordered_map>

namespace ampscope::profiler {

void CompiledKernelTimes::add_ops(const std::vector<OpRecord>& ops) {
  struct GraphCall {
    int64_t graph;
    std::unordered_map<std::string, int64_t> seen;  // name -> children of that name so far
  };
  std::unordered_map<uint64_t, GraphCall> calls;  // the graph op's id -> its call
  for (const OpRecord& op : ops) {
    if (!op.name.starts_with(kCompiledGraphOpPrefix)) continue;
    const std::string_view number = std::string_view(op.name).substr(kCompiledGraphOpPrefix.size());
    int64_t graph = 0;
    if (std::from_chars(number.data(), number.data() + number.size(), graph).ec != std::errc()) continue;
    calls.emplace(op.id, GraphCall{graph, {}});
    Time& t = times_[{graph, std::string(), 0}];
    t.phase = op.phase;
    ++t.calls;
    t.cpu_time_ns += op.end_ns - op.start_ns;
  }
  if (calls.empty()) return;
  // By start time (OpBatch::to_records), so a child's ordinal is its place among
  // the call's children of that name.
  for (const OpRecord& op : ops) {
    auto it = calls.find(op.parent_id);
    if (it == calls.end()) continue;
    const int64_t ordinal = it->second.seen[op.name]++;
    Time& t = times_[{it->second.graph, op.name, ordinal}];
    t.phase = op.phase;
    ++t.calls;
    t.cpu_time_ns += op.end_ns - op.start_ns;
  }
}

std::vector<CompiledKernelRow> join_compiled_kernels(const std::vector<CompiledKernelRow>& listed,
                                                     const CompiledKernelTimes& times) {
  std::map<int64_t, std::vector<const CompiledKernelRow*>> by_graph;
  for (const CompiledKernelRow& row : listed) by_graph[row.graph].push_back(&row);
  for (const auto& [key, time] : times.times()) by_graph[std::get<0>(key)];
  std::vector<CompiledKernelRow> out;
  for (const auto& [graph, rows] : by_graph) {
    auto time_of = [&](const std::string& name, int64_t ordinal) -> const CompiledKernelTimes::Time* {
      const auto it = times.times().find({graph, name, ordinal});
      return it == times.times().end() ? nullptr : &it->second;
    };
    CompiledKernelRow& whole = out.emplace_back();
    whole.graph = graph;
    whole.kind = kCompiledGraphCall;
    if (!rows.empty()) whole.phase = rows.front()->phase;
    if (const auto* t = time_of("", 0)) {
      whole.phase = t->phase;
      whole.calls = t->calls;
      whole.cpu_time_ns = t->cpu_time_ns;
    }
    std::set<std::pair<std::string, int64_t>> named;
    for (const CompiledKernelRow* row : rows) {
      CompiledKernelRow& r = out.emplace_back(*row);
      named.emplace(r.kernel, r.ordinal);
      if (const auto* t = time_of(r.kernel, r.ordinal)) {
        r.calls = t->calls;
        r.cpu_time_ns = t->cpu_time_ns;
      }
    }
    for (auto it = times.times().lower_bound({graph, std::string(), 0});
         it != times.times().end() && std::get<0>(it->first) == graph; ++it) {
      const auto& [key, t] = *it;
      if (std::get<1>(key).empty() || named.contains({std::get<1>(key), std::get<2>(key)})) continue;
      CompiledKernelRow& r = out.emplace_back();
      r.graph = graph;
      r.phase = t.phase;
      r.kind = kCompiledOtherCall;
      r.kernel = std::get<1>(key);
      r.ordinal = std::get<2>(key);
      r.calls = t.calls;
      r.cpu_time_ns = t.cpu_time_ns;
    }
  }
  return out;
}

CompiledTimeShare compiled_time_share(const std::vector<CompiledKernelRow>& rows) {
  CompiledTimeShare share;
  for (const CompiledKernelRow& r : rows) {
    if (r.kind == kCompiledGraphCall) share.graph_ns += r.cpu_time_ns;
    else if (r.kind == kCompiledOtherCall) share.other_ns += r.cpu_time_ns;
    else share.kernel_ns += r.cpu_time_ns;
  }
  return share;
}

}  // namespace ampscope::profiler
