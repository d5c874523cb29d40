#include "profiler/analysis/compiled_kernels.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <unordered_map>

namespace ampscope::profiler {

namespace {

// Kernels settle a step or two after their ops; ops older than this are forgotten.
constexpr int64_t kLauncherSteps = 8;

void add_gpu(CompiledKernelTimes::Time& t, const KernelRecord& k) {
  ++t.kernels;
  if (k.tensor_core_by_name) ++t.tensor_core_kernels;
  t.gpu_time_ns += k.end_ns - k.start_ns;
}

}  // namespace

void CompiledKernelTimes::add_ops(const std::vector<OpRecord>& ops) {
  int64_t newest = 0;
  // By start time (OpBatch::to_records): a graph's op comes before its children, a
  // child before its own, and a child's ordinal is its place among the call's
  // children of that name.
  for (const OpRecord& op : ops) {
    newest = std::max(newest, op.step);
    if (op.name.starts_with(kCompiledGraphOpPrefix)) {
      const std::string_view number = std::string_view(op.name).substr(kCompiledGraphOpPrefix.size());
      int64_t graph = 0;
      if (std::from_chars(number.data(), number.data() + number.size(), graph).ec != std::errc()) continue;
      const Key whole{graph, std::string(), 0};
      Time& t = times_[whole];
      t.phase = op.phase;
      ++t.calls;
      t.cpu_time_ns += op.end_ns - op.start_ns;
      launchers_[op.id] = {op.step, op.id, whole};
      launches_[op.id] = {graph, {}};
      continue;
    }
    const auto parent = launchers_.find(op.parent_id);
    if (parent == launchers_.end()) continue;
    Launcher launcher = parent->second;
    launcher.step = op.step;
    if (std::get<1>(launcher.child).empty()) {  // a child of the graph's op
      CallLaunches& call = launches_[launcher.call];
      launcher.child = Key{call.graph, op.name, call.seen[op.name]++};
      Time& t = times_[launcher.child];
      t.phase = op.phase;
      ++t.calls;
      t.cpu_time_ns += op.end_ns - op.start_ns;
    }
    launchers_[op.id] = std::move(launcher);
  }
  forget_before(newest - kLauncherSteps);
}

void CompiledKernelTimes::add_kernels(const std::vector<const KernelRecord*>& kernels) {
  if (launchers_.empty()) return;
  std::vector<const KernelRecord*> by_start(kernels);
  // Launch order within a call (one stream runs them in order), for the ordinals.
  std::stable_sort(by_start.begin(), by_start.end(),
                   [](const KernelRecord* a, const KernelRecord* b) { return a->start_ns < b->start_ns; });
  for (const KernelRecord* k : by_start) {
    const auto it = launchers_.find(k->op_id);
    if (it == launchers_.end()) continue;
    const Launcher& l = it->second;
    const int64_t graph = std::get<0>(l.child);
    Time& whole = times_[{graph, std::string(), 0}];
    add_gpu(whole, *k);
    if (!std::get<1>(l.child).empty()) {
      add_gpu(times_[l.child], *k);
      continue;
    }
    // Launched by the graph's op itself: a Triton kernel, or a CUDA graph's replay.
    CallLaunches& call = launches_[l.call];
    Time& t = times_[{graph, k->name, call.seen[k->name]++}];
    t.phase = whole.phase;
    ++t.calls;
    add_gpu(t, *k);
  }
}

void CompiledKernelTimes::forget_before(int64_t step) {
  std::erase_if(launchers_, [&](const auto& entry) { return entry.second.step < step; });
  std::erase_if(launches_, [&](const auto& entry) { return !launchers_.contains(entry.first); });
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
    const auto take = [](CompiledKernelRow& r, const CompiledKernelTimes::Time& t) {
      r.calls = t.calls;
      r.cpu_time_ns = t.cpu_time_ns;
      r.kernels = t.kernels;
      r.tensor_core_kernels = t.tensor_core_kernels;
      r.gpu_time_ns = t.gpu_time_ns;
    };
    if (const auto* t = time_of("", 0)) {
      whole.phase = t->phase;
      take(whole, *t);
    }
    std::set<std::pair<std::string, int64_t>> named;
    for (const CompiledKernelRow* row : rows) {
      CompiledKernelRow& r = out.emplace_back(*row);
      named.emplace(r.kernel, r.ordinal);
      if (const auto* t = time_of(r.kernel, r.ordinal)) take(r, *t);
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
      take(r, t);
    }
  }
  return out;
}

CompiledTimeShare compiled_time_share(const std::vector<CompiledKernelRow>& rows) {
  CompiledTimeShare share;
  for (const CompiledKernelRow& r : rows) {
    if (r.kind == kCompiledGraphCall) {
      share.graph_ns += r.cpu_time_ns;
      share.gpu_graph_ns += r.gpu_time_ns;
    } else if (r.kind == kCompiledOtherCall) {
      share.other_ns += r.cpu_time_ns;
      share.gpu_other_ns += r.gpu_time_ns;
    } else {
      share.kernel_ns += r.cpu_time_ns;
      share.gpu_kernel_ns += r.gpu_time_ns;
    }
  }
  return share;
}

}  // namespace ampscope::profiler
