#include "profiler/analysis/compiled_kernels.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace ampscope::profiler {

namespace {

// The heaviest common subsequence of two sequences of (name, weight): for each of
// `a`'s elements, the index of the `b` element it is matched with, or -1. Ties
// prefer `b`'s later elements, so an extra early kernel in `b` (a first call's
// one-off) stays unmatched.
struct Launch {
  const std::string* name;
  uint32_t weight;
};
std::vector<int64_t> align_by_name(const std::vector<Launch>& a, const std::vector<Launch>& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<uint64_t> score((n + 1) * (m + 1), 0);
  const auto at = [&](size_t i, size_t j) -> uint64_t& { return score[i * (m + 1) + j]; };
  const auto same = [&](size_t i, size_t j) { return *a[i - 1].name == *b[j - 1].name; };
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      at(i, j) = std::max(at(i - 1, j), at(i, j - 1));
      if (same(i, j)) at(i, j) = std::max(at(i, j), at(i - 1, j - 1) + a[i - 1].weight);
    }
  std::vector<int64_t> match(n, -1);
  for (size_t i = n, j = m; i > 0 && j > 0;) {
    if (same(i, j) && at(i, j) == at(i - 1, j - 1) + a[i - 1].weight) {
      match[i - 1] = static_cast<int64_t>(j - 1);
      --i;
      --j;
    } else if (at(i, j - 1) >= at(i - 1, j)) {
      --j;
    } else {
      --i;
    }
  }
  return match;
}

// A kernel outweighs any number of copies and memsets: a first call's extra copies
// (Triton's autotuner cloning the buffers a kernel writes) must not pull the
// alignment off the GEMMs.
uint32_t launch_weight(ActivityKind kind) { return kind == ActivityKind::kKernel ? 1u << 16 : 1u; }

// Alignments larger than this (cells) are not tried: the replayed kernels keep their names.
constexpr size_t kMaxAlignmentCells = size_t{1} << 24;
// An eager call's kernels kept for the alignment (a first call can launch thousands while tuning).
constexpr size_t kMaxEagerKernels = size_t{1} << 16;

// What Triton's autotuner runs between a kernel's timed runs: the buffers the kernel
// writes zeroed (reset_to_zero_args) or restored from a copy (restore_value).
bool is_tuning_buffer_reset(std::string_view op) {
  return op == "aten::zero_" || op == "aten::clone" || op == "aten::copy_";
}

void add_up(CompiledKernelRow& r, const CompiledKernelTimes::Time& t) {
  r.calls += t.calls;
  r.cpu_time_ns += t.cpu_time_ns;
  r.kernels += t.kernels;
  r.tensor_core_kernels += t.tensor_core_kernels;
  r.gpu_time_ns += t.gpu_time_ns;
  r.first_call_gpu_ns += t.first_call_gpu_ns;
}

void add_gpu(CompiledKernelTimes::Time& t, const KernelRecord& k, bool first_call, bool apart) {
  const int64_t ns = k.end_ns - k.start_ns;
  ++t.kernels;
  if (k.tensor_core_by_name) ++t.tensor_core_kernels;
  t.gpu_time_ns += ns;
  if (first_call) t.first_call_gpu_ns += ns;
  if (!apart) return;
  ++t.apart.kernels;
  if (k.tensor_core_by_name) ++t.apart.tensor_core_kernels;
  t.apart.gpu_time_ns += ns;
  if (first_call) t.apart.first_call_gpu_ns += ns;
}

void add_call(CompiledKernelTimes::Time& t, const OpRecord& op, bool apart) {
  ++t.calls;
  t.cpu_time_ns += op.end_ns - op.start_ns;
  if (!apart) return;
  ++t.apart.calls;
  t.apart.cpu_time_ns += op.end_ns - op.start_ns;
}

// The figures without the step kept apart.
CompiledKernelTimes::Time without_apart(CompiledKernelTimes::Time t) {
  t.calls -= t.apart.calls;
  t.cpu_time_ns -= t.apart.cpu_time_ns;
  t.kernels -= t.apart.kernels;
  t.tensor_core_kernels -= t.apart.tensor_core_kernels;
  t.gpu_time_ns -= t.apart.gpu_time_ns;
  t.first_call_gpu_ns -= t.apart.first_call_gpu_ns;
  t.apart = {};
  return t;
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
      add_call(t, op, step_apart_ != 0 && op.step == step_apart_);
      launchers_[op.id] = {op.step, op.id, whole, op.id, false};
      const bool first = first_calls_.try_emplace(graph, op.id).first->second == op.id;
      launches_[op.id] = {graph, first, {}, 0};
      continue;
    }
    const auto parent = launchers_.find(op.parent_id);
    if (parent == launchers_.end()) continue;
    Launcher launcher = parent->second;
    launcher.step = op.step;
    if (std::get<1>(launcher.child).empty()) {  // a child of the graph's op
      CallLaunches& call = launches_[launcher.call];
      launcher.child = Key{call.graph, op.name, call.seen[op.name]++};
      launcher.child_op = op.id;
      Time& t = times_[launcher.child];
      t.phase = op.phase;
      add_call(t, op, step_apart_ != 0 && op.step == step_apart_);
    }
    launcher.launched = false;
    launchers_[op.id] = std::move(launcher);
  }
  forget_before(newest - op_memory_steps_);
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
    const bool apart = step_apart_ != 0 && l.step == step_apart_;
    CallLaunches& call = launches_[l.call];
    Time& whole = times_[{graph, std::string(), 0}];
    add_gpu(whole, *k, call.first, apart);
    if (!std::get<1>(l.child).empty()) {
      Time& child = times_[l.child];
      add_gpu(child, *k, call.first, apart);
      const auto child_op = launchers_.find(l.child_op);
      if (child_op != launchers_.end() && !child_op->second.launched) {
        child_op->second.launched = true;
        ++child.calls_with_kernels;
      }
      EagerCall& eager = eager_calls_[graph];
      if (eager.call == 0) eager.call = l.call;
      if (eager.call == l.call && eager.kernels.size() < kMaxEagerKernels)
        eager.kernels.push_back({k->name, l.child, launch_weight(k->kind)});
      continue;
    }
    // Launched by the graph's op itself: a Triton kernel, or a CUDA graph's replay.
    const Key key{graph, k->name, call.seen[k->name]++};
    Time& t = times_[key];
    t.phase = whole.phase;
    ++t.calls;
    if (apart) ++t.apart.calls;
    add_gpu(t, *k, call.first, apart);
    own_launch_place_.try_emplace(key, OwnLaunch{call.own_launches++, launch_weight(k->kind)});
  }
}

const CompiledKernelTimes::ReplayMoves& CompiledKernelTimes::replay_moves(int64_t graph, const EagerCall& eager) const {
  // The keys the graph's op launched itself that an eager child op launched too, in
  // launch order: only a CUDA graph's replay launches a library kernel itself (a
  // Triton kernel is never a child op's).
  std::set<std::string_view> eager_names;
  for (const EagerLaunch& launch : eager.kernels) eager_names.insert(launch.name);
  std::vector<std::pair<OwnLaunch, const Key*>> replayed;
  for (auto it = own_launch_place_.lower_bound({graph, std::string(), 0});
       it != own_launch_place_.end() && std::get<0>(it->first) == graph; ++it)
    if (eager_names.contains(std::get<1>(it->first))) replayed.emplace_back(it->second, &it->first);
  Alignment& cached = alignments_[graph];
  if (cached.eager_kernels == eager.kernels.size() && cached.replayed == replayed.size()) return cached.moves;
  cached = {eager.kernels.size(), replayed.size(), {}};
  if (replayed.empty()) return cached.moves;
  std::sort(replayed.begin(), replayed.end(),
            [](const auto& x, const auto& y) { return x.first.place < y.first.place; });
  std::set<std::string_view> replayed_names;
  for (const auto& entry : replayed) replayed_names.insert(std::get<1>(*entry.second));
  std::vector<const EagerLaunch*> candidates;
  for (const EagerLaunch& launch : eager.kernels)
    if (replayed_names.contains(launch.name)) candidates.push_back(&launch);
  if (replayed.size() * candidates.size() > kMaxAlignmentCells) return cached.moves;
  std::vector<Launch> a, b;
  for (const auto& [launch, key] : replayed) a.push_back({&std::get<1>(*key), launch.weight});
  for (const EagerLaunch* launch : candidates) b.push_back({&launch->name, launch->weight});
  const std::vector<int64_t> match = align_by_name(a, b);
  for (size_t i = 0; i < replayed.size(); ++i)
    if (match[i] >= 0) cached.moves.emplace_back(*replayed[i].second, candidates[static_cast<size_t>(match[i])]->child);
  return cached.moves;
}

std::map<CompiledKernelTimes::Key, CompiledKernelTimes::Time> CompiledKernelTimes::attributed_times() const {
  std::map<Key, Time> out = times_;
  for (const auto& [graph, eager] : eager_calls_) {
    // A child's calls: those that ran kernels, and its replays (each replayed kernel
    // of it counts its calls once per call). A call CUDA graph trees recorded ran the
    // child on the CPU and its kernels in the replay that follows: one call.
    std::map<Key, int64_t> replay_calls;
    for (const auto& [from, child] : replay_moves(graph, eager)) {
      const auto moved = out.find(from);
      if (moved == out.end()) continue;
      Time& to = out[child];
      to.kernels += moved->second.kernels;
      to.tensor_core_kernels += moved->second.tensor_core_kernels;
      to.gpu_time_ns += moved->second.gpu_time_ns;
      to.first_call_gpu_ns += moved->second.first_call_gpu_ns;
      to.apart.kernels += moved->second.apart.kernels;
      to.apart.tensor_core_kernels += moved->second.apart.tensor_core_kernels;
      to.apart.gpu_time_ns += moved->second.apart.gpu_time_ns;
      to.apart.first_call_gpu_ns += moved->second.apart.first_call_gpu_ns;
      int64_t& calls = replay_calls[child];
      calls = std::max(calls, moved->second.calls);
      out.erase(moved);
    }
    for (const auto& [child, calls] : replay_calls) {
      Time& t = out[child];
      t.calls = t.calls_with_kernels + calls;
      // Its calls apart are not recounted so (a CUDA graph's first calls run eagerly): at most all.
      t.apart.calls = std::min(t.apart.calls, t.calls);
    }
  }
  return out;
}

void CompiledKernelTimes::forget_before(int64_t step) {
  std::erase_if(launchers_, [&](const auto& entry) { return entry.second.step < step; });
  std::erase_if(launches_, [&](const auto& entry) { return !launchers_.contains(entry.first); });
}

std::vector<CompiledKernelRow> join_compiled_kernels(const std::vector<CompiledKernelRow>& listed,
                                                     const CompiledKernelTimes& times, bool without_apart) {
  const std::map<CompiledKernelTimes::Key, CompiledKernelTimes::Time> attributed = times.attributed_times();
  // What a row shows: every step's figures, or those without the step kept apart. Tuning
  // is told by every step's (a first call's launches, which that step may hold).
  const auto shown = [without_apart](const CompiledKernelTimes::Time& t) {
    return without_apart ? profiler::without_apart(t) : t;
  };
  std::map<int64_t, std::vector<const CompiledKernelRow*>> by_graph;
  for (const CompiledKernelRow& row : listed) by_graph[row.graph].push_back(&row);
  for (const auto& [key, time] : attributed) by_graph[std::get<0>(key)];
  std::vector<CompiledKernelRow> out;
  for (const auto& [graph, rows] : by_graph) {
    auto time_of = [&](const std::string& name, int64_t ordinal) -> const CompiledKernelTimes::Time* {
      const auto it = attributed.find({graph, name, ordinal});
      return it == attributed.end() ? nullptr : &it->second;
    };
    CompiledKernelRow& whole = out.emplace_back();
    whole.graph = graph;
    whole.kind = kCompiledGraphCall;
    if (!rows.empty()) whole.phase = rows.front()->phase;
    const auto take = [](CompiledKernelRow& r, const CompiledKernelTimes::Time& t) {
      r.calls = r.cpu_time_ns = r.kernels = r.tensor_core_kernels = r.gpu_time_ns = r.first_call_gpu_ns = 0;
      add_up(r, t);
    };
    if (const auto* t = time_of("", 0)) {
      whole.phase = t->phase;
      take(whole, shown(*t));
    }
    std::set<std::pair<std::string, int64_t>> named;
    std::map<std::string, const CompiledKernelRow*, std::less<>> fused_by_name;
    for (const CompiledKernelRow* row : rows) {
      CompiledKernelRow& r = out.emplace_back(*row);
      named.emplace(r.kernel, r.ordinal);
      if (r.kind == kCompiledFusedKernel) fused_by_name.try_emplace(r.kernel, row);
      if (const auto* t = time_of(r.kernel, r.ordinal)) take(r, shown(*t));
    }
    // The unlisted: a first call's launches of a listed kernel and, where there are
    // such, its buffer resets are tuning, summed per name; the rest "other" rows.
    std::vector<const std::pair<const CompiledKernelTimes::Key, CompiledKernelTimes::Time>*> unlisted;
    for (auto it = attributed.lower_bound({graph, std::string(), 0});
         it != attributed.end() && std::get<0>(it->first) == graph; ++it)
      if (!std::get<1>(it->first).empty() && !named.contains({std::get<1>(it->first), std::get<2>(it->first)}))
        unlisted.push_back(&*it);
    const auto first_call_only = [](const CompiledKernelTimes::Time& t) {
      return t.gpu_time_ns > 0 && t.first_call_gpu_ns == t.gpu_time_ns;
    };
    const bool tuned = std::any_of(unlisted.begin(), unlisted.end(), [&](const auto* entry) {
      return first_call_only(entry->second) && fused_by_name.contains(std::get<1>(entry->first));
    });
    std::map<std::string, size_t> tuning_row;  // name -> its row in out
    for (const auto* entry : unlisted) {
      const auto& [key, t] = *entry;
      const std::string& name = std::get<1>(key);
      const auto fused = fused_by_name.find(name);
      const bool tuning =
          first_call_only(t) && (fused != fused_by_name.end() || (tuned && is_tuning_buffer_reset(name)));
      const CompiledKernelTimes::Time own = shown(t);
      if (own.calls == 0 && own.cpu_time_ns == 0 && own.kernels == 0) continue;  // all in the step apart
      if (tuning) {
        if (const auto it = tuning_row.find(name); it != tuning_row.end()) {
          add_up(out[it->second], own);
          continue;
        }
        tuning_row.emplace(name, out.size());
      }
      CompiledKernelRow& r = out.emplace_back();
      r.graph = graph;
      r.phase = t.phase;
      r.kind = tuning ? kCompiledTuningCall : kCompiledOtherCall;
      r.kernel = name;
      r.ordinal = std::get<2>(key);
      if (tuning && fused != fused_by_name.end()) r.ops = fused->second->ops;
      take(r, own);
    }
  }
  return out;
}

std::vector<OpStats> compiled_op_rows(const std::vector<CompiledOpSignature>& signatures,
                                      const std::vector<int64_t>& graph_calls) {
  std::vector<OpStats> rows;
  rows.reserve(signatures.size());
  for (const CompiledOpSignature& s : signatures) {
    OpStats& r = rows.emplace_back(s.row);
    r.compiled = true;
    r.calls = 0;
    for (const auto& [graph, occurrences] : s.occurrences)
      if (graph < graph_calls.size()) r.calls += occurrences * graph_calls[graph];
    r.cast_calls = r.category == OpCategory::kAutocastCast ? r.calls : 0;
  }
  return rows;
}

CompiledTimeShare compiled_time_share(const std::vector<CompiledKernelRow>& rows) {
  CompiledTimeShare share;
  for (const CompiledKernelRow& r : rows) {
    if (r.kind == kCompiledGraphCall) {
      share.graph_ns += r.cpu_time_ns;
      share.gpu_graph_ns += r.gpu_time_ns;
      share.gpu_graph_first_ns += r.first_call_gpu_ns;
      share.calls += r.calls;
      ++share.graphs;
    } else if (r.kind == kCompiledOtherCall) {
      share.other_ns += r.cpu_time_ns;
      share.gpu_other_ns += r.gpu_time_ns;
    } else if (r.kind == kCompiledTuningCall) {
      share.tuning_ns += r.cpu_time_ns;
      share.gpu_tuning_ns += r.gpu_time_ns;
    } else {
      share.kernel_ns += r.cpu_time_ns;
      share.gpu_kernel_ns += r.gpu_time_ns;
      share.gpu_kernel_first_ns += r.first_call_gpu_ns;
    }
  }
  return share;
}

std::vector<CompiledComputeTime> compiled_compute_time(const std::vector<CompiledKernelRow>& rows) {
  const auto is_decision = [](OpCategory c) {
    return c == OpCategory::kDemoted || c == OpCategory::kKeptFp32 || c == OpCategory::kPromoted;
  };
  std::map<std::pair<OpCategory, std::string>, CompiledComputeTime> sums;
  for (const CompiledKernelRow& r : rows) {
    if (r.kind != kCompiledFusedKernel && r.kind != kCompiledExternKernel) continue;
    std::array<int, kOpCategoryCount> ops_in{};
    for (const CompiledFusedOp& op : r.ops)
      if (const auto c = parse_category(op.category)) ++ops_in[static_cast<size_t>(*c)];
    std::optional<OpCategory> chosen;
    auto most = [&](auto&& wanted) {
      for (size_t c = 0; c < ops_in.size(); ++c)
        if (ops_in[c] > 0 && wanted(static_cast<OpCategory>(c)) &&
            (!chosen || ops_in[c] > ops_in[static_cast<size_t>(*chosen)]))
          chosen = static_cast<OpCategory>(c);
    };
    most(is_decision);
    if (!chosen && ops_in[static_cast<size_t>(OpCategory::kUnchanged)] > 0) chosen = OpCategory::kUnchanged;
    if (!chosen) most([](OpCategory) { return true; });
    if (!chosen) continue;  // no op it computes is known
    std::string dtype;
    for (const CompiledFusedOp& op : r.ops)
      if (parse_category(op.category) == chosen && !op.output_dtypes.empty()) dtype = op.output_dtypes.front();
    CompiledComputeTime& sum = sums[{*chosen, dtype}];
    sum.category = *chosen;
    sum.output_dtype = dtype;
    sum.cpu_time_ns += r.cpu_time_ns;
    sum.gpu_time_ns += r.gpu_time_ns;
  }
  std::vector<CompiledComputeTime> out;
  for (auto& [key, sum] : sums) out.push_back(std::move(sum));
  return out;
}

}  // namespace ampscope::profiler
